// Export the actor as safetensors and load one back. Loading is refused with its reason when the
// file does not fit the current task; a refused file changes nothing.
import { useRef, useState } from 'react';
import { Trans, useTranslation } from 'react-i18next';

// Loaded on first use: the file checks bring the safetensors reader and every task's alphabet,
// which the first paint does not need.
const checkpoints = () => import('../store/checkpoints.ts');

/** The names exported actors get (checkpoints.actorFileName): an identifier, the same in every language. */
const FILE_PATTERN = 'ppo-actor-<task>-iter<N>.safetensors';

export function CheckpointPanel() {
  const { t } = useTranslation('notices');
  const input = useRef<HTMLInputElement>(null);
  const [busy, setBusy] = useState(false);
  const run = (job: () => Promise<void>) => {
    setBusy(true);
    void job().finally(() => setBusy(false));
  };
  return (
    <section className="checkpoints card" aria-labelledby="checkpoints-title">
      <div className="card-head">
        <h2 id="checkpoints-title">{t('checkpoints.title')}</h2>
      </div>
      <div className="buttons">
        <button
          type="button"
          className="btn small"
          disabled={busy}
          onClick={() => run(async () => (await checkpoints()).exportActor())}
          title={t('checkpoints.exportTitle', { format: 'safetensors' })}
        >
          {t('checkpoints.export')}
        </button>
        <button type="button" className="btn small" disabled={busy} onClick={() => input.current?.click()} title={t('checkpoints.loadTitle', { ext: '.safetensors' })}>
          {t('checkpoints.load')}
        </button>
        <input
          ref={input}
          type="file"
          accept=".safetensors,application/octet-stream"
          className="visually-hidden"
          aria-label={t('checkpoints.fileLabel')}
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
        <Trans t={t} i18nKey="checkpoints.help" components={{ pattern: <code>{FILE_PATTERN}</code> }} />
      </p>
    </section>
  );
}
