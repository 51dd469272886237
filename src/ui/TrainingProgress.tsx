// The active run's progress: iterations done (of its preset budget), iterations per second over
// the last few iterations, and the time left to the budget ("—" without a budget or a rate).
import { useTranslation } from 'react-i18next';
import { useApp } from '../store/appStore.ts';
import { formatEta, formatSpeed } from '../store/presetRun.ts';

export function TrainingProgress() {
  const { t } = useTranslation('common');
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
      <span data-testid="iterations">{run ? (budget ? t('progress.iterationOfBudget', { done, budget }) : t('progress.iteration', { done })) : t('progress.noRun')}</span>
      {compiling ? (
        <span data-testid="compiling" title={t('progress.compilingHint')}>
          {t('progress.compiling', { done: compile.done, total: compile.total })}
        </span>
      ) : null}
      <span data-testid="speed" title={t('progress.speedHint')}>
        {live === null ? t('progress.speedUnknown') : formatSpeed(live)}
      </span>
      <span data-testid="eta" title={budget ? t('progress.etaHint', { n: budget }) : t('progress.noBudgetHint')}>
        {t('progress.eta', { eta: run && budget && done >= budget ? t('progress.done') : formatEta(done, budget, live) })}
      </span>
    </span>
  );
}
