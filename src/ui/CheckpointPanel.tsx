// Export the actor as safetensors and load one back. Loading is refused with its reason when the
// file does not fit the current task; a refused file changes nothing.
import { useRef, useState } from 'react';

// Loaded on first use: the file checks bring the safetensors reader and every task's alphabet,
// which the first paint does not need.
const checkpoints = () => import('../store/checkpoints.ts');

export function CheckpointPanel() {
  const input = useRef<HTMLInputElement>(null);
  const [busy, setBusy] = useState(false);
  const run = (job: () => Promise<void>) => {
    setBusy(true);
    void job().finally(() => setBusy(false));
  };
  return (
    <section className="checkpoints card" aria-labelledby="checkpoints-title">
      <div className="card-head">
        <h2 id="checkpoints-title">Checkpoints</h2>
      </div>
      <div className="buttons">
        <button
          type="button"
          className="btn small"
          disabled={busy}
          onClick={() => run(async () => (await checkpoints()).exportActor())}
          title="Download the current policy weights (safetensors, opens in Python)"
        >
          Export actor
        </button>
        <button type="button" className="btn small" disabled={busy} onClick={() => input.current?.click()} title="Train from a .safetensors actor exported earlier">
          Load actor…
        </button>
        <input
          ref={input}
          type="file"
          accept=".safetensors,application/octet-stream"
          className="visually-hidden"
          aria-label="Actor checkpoint file"
          data-testid="checkpoint-file"
          onChange={(e) => {
            const file = e.target.files?.[0];
            e.target.value = '';
            if (file)
              run(async () => {
                // A loaded actor is the model that trains from now on: the header and the knobs say its size.
                if (await (await checkpoints()).loadActorFile(file)) await (await import('../store/sftFlows.ts')).rememberLoadedActor(file);
              });
          }}
        />
      </div>
      <p className="muted small checkpoint-help">
        Files are named <code>ppo-actor-&lt;task&gt;-iter&lt;N&gt;.safetensors</code>; a loaded actor must come from the same task.
      </p>
    </section>
  );
}
