// Which run's batch the teaching views show, once more than one run has one: after "Run both" the
// student compares the arms (e.g. β = 0 beside β = 0.6), or a playground run with the own model's
// iteration (its real tokens). With a single batch there is nothing to pick.
import { useMemo } from 'react';
import { useTranslation } from 'react-i18next';
import { useApp } from '../../store/appStore.ts';
import { type RunBatch, runsWithBatch } from '../../store/batches.ts';
import { ownModelRunName } from '../inspect/text.ts';

export function BatchRunPicker() {
  const { t } = useTranslation(['teach', 'inspect']);
  const runs = useApp((s) => s.runs);
  const batches = useApp((s) => s.batches);
  const ownBatches = useApp((s) => s.ownBatches);
  const shown = useApp((s) => s.batchRunId);
  const activeRunId = useApp((s) => s.activeRunId);
  const viewRun = useApp((s) => s.viewRun);
  const choices = useMemo(() => runsWithBatch(runs, batches), [runs, batches]);
  const iteration = (b: RunBatch) => {
    const iter = b.samples?.iter ?? b.ratios?.iter;
    return iter === undefined ? '' : t('batchRun.iteration', { iter });
  };
  if (choices.length + ownBatches.length < 2) {
    // One batch, nothing to pick: an own-model batch still says whose it is (the views read alike).
    const own = ownBatches.find((b) => b.id === shown);
    return own ? (
      <p className="muted small" data-testid="batch-run-own">
        {t('batchRun.ownModelOnly', { run: ownModelRunName(own), iteration: iteration(own.batch) })}
      </p>
    ) : null;
  }
  return (
    <div className="toolbar batch-run-picker" style={{ marginBottom: 10 }}>
      <label>
        {t('batchRun.label')}
        <select value={shown ?? ''} onChange={(e) => viewRun(e.target.value)} aria-label={t('batchRun.label')} data-testid="batch-run">
          {shown !== null && !choices.some((r) => r.id === shown) && !ownBatches.some((b) => b.id === shown) ? <option value={shown}>{t('batchRun.training')}</option> : null}
          {choices.map((r) => (
            <option key={r.id} value={r.id}>
              {r.name}
              {iteration(batches[r.id])}
              {r.id === activeRunId ? t('batchRun.current') : ''}
            </option>
          ))}
          {ownBatches.map((b) => (
            <option key={b.id} value={b.id}>
              {ownModelRunName(b)}
              {iteration(b.batch)}
            </option>
          ))}
        </select>
      </label>
      <span className="muted small">{t('batchRun.note')}</span>
    </div>
  );
}
