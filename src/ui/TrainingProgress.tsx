// The active run's progress: iterations done (of its preset budget), iterations per second over
// the last few iterations, and the time left to the budget ("—" without a budget or a rate).
import { useApp } from '../store/appStore.ts';
import { formatEta, formatSpeed } from '../store/presetRun.ts';

export function TrainingProgress() {
  const run = useApp((s) => s.runs.find((r) => r.id === s.activeRunId) ?? null);
  const speed = useApp((s) => s.speed);
  const runState = useApp((s) => s.runState);
  const compile = useApp((s) => s.compile);
  const done = run?.metrics.length ?? 0;
  // Before the first iteration can run, the WebGPU kernels must be built (once per page load; on a
  // software GPU this takes seconds): say so instead of a silent wait after Start.
  const compiling = runState === 'running' && compile !== null && compile.done < compile.total;
  const budget = run?.budget ?? null;
  const live = runState === 'running' ? speed : null;
  return (
    <span className="progress small" data-testid="progress" aria-live="off">
      <span data-testid="iterations">{run ? `iteration ${done}${budget ? ` / ${budget}` : ''}` : 'no run'}</span>
      {compiling ? (
        <span data-testid="compiling" title="GPU kernels are compiled once per page load, before the first iteration">
          compiling GPU kernels {compile.done} / {compile.total}
        </span>
      ) : null}
      <span data-testid="speed" title="Iterations per second over the last ten iterations (held-out evaluations included)">
        {live === null ? '— it/s' : formatSpeed(live)}
      </span>
      <span data-testid="eta" title={budget ? `Time left to the preset's budget of ${budget} iterations` : 'No iteration budget: pick a preset to get one'}>
        ETA {run && budget && done >= budget ? 'done' : formatEta(done, budget, live)}
      </span>
    </span>
  );
}
