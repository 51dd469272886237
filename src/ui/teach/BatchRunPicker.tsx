// Which run's batch the teaching views show, once more than one run has one: after "Run both" the
// student compares the arms (e.g. β = 0 beside β = 0.6). With a single run there is nothing to pick.
import { useMemo } from 'react';
import { useTranslation } from 'react-i18next';
import { useApp } from '../../store/appStore.ts';
import { runsWithBatch } from '../../store/batches.ts';

export function BatchRunPicker() {
  const { t } = useTranslation('teach');
  const runs = useApp((s) => s.runs);
  const batches = useApp((s) => s.batches);
  const shown = useApp((s) => s.batchRunId);
  const activeRunId = useApp((s) => s.activeRunId);
  const viewRun = useApp((s) => s.viewRun);
  const choices = useMemo(() => runsWithBatch(runs, batches), [runs, batches]);
  if (choices.length < 2) return null;
  return (
    <div className="toolbar batch-run-picker" style={{ marginBottom: 10 }}>
      <label>
        {t('batchRun.label')}
        <select value={shown ?? ''} onChange={(e) => viewRun(e.target.value)} aria-label={t('batchRun.label')} data-testid="batch-run">
          {shown !== null && !choices.some((r) => r.id === shown) ? <option value={shown}>{t('batchRun.training')}</option> : null}
          {choices.map((r) => {
            const b = batches[r.id];
            const iter = b.samples?.iter ?? b.ratios?.iter;
            return (
              <option key={r.id} value={r.id}>
                {r.name}
                {iter === undefined ? '' : t('batchRun.iteration', { iter })}
                {r.id === activeRunId ? t('batchRun.current') : ''}
              </option>
            );
          })}
        </select>
      </label>
      <span className="muted small">{t('batchRun.note')}</span>
    </div>
  );
}
