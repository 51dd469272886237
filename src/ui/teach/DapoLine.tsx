// One line about DAPO's dynamic sampling in the latest iteration of the run on show (only when it is on).
import { Trans, useTranslation } from 'react-i18next';
import { useApp } from '../../store/appStore.ts';

export function DapoLine() {
  const { t } = useTranslation('teach');
  const latest = useApp((s) => {
    // The run whose batch is on show: its metrics belong with the samples beside them.
    const run = s.runs.find((r) => r.id === s.batchRunId);
    return run?.metrics[run.metrics.length - 1]?.values;
  });
  if (latest?.filtered_groups === undefined) return null;
  const filled = latest.filled_with_filtered ?? 0;
  return (
    <p className="small" data-testid="dapo-filtered">
      <Trans
        t={t}
        i18nKey="dapo.line"
        values={{
          groups: latest.filtered_groups,
          rounds: latest.dynamic_sampling_rounds ?? 1,
          refilled: filled > 0 ? t('dapo.refilled', { filled }) : '',
        }}
        components={{ b: <strong /> }}
      />
    </p>
  );
}
