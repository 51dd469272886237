// One line about DAPO's dynamic sampling in the latest iteration of the run on show (only when it is on).
import { useApp } from '../../store/appStore.ts';

export function DapoLine() {
  const latest = useApp((s) => {
    // The run whose batch is on show: its metrics belong with the samples beside them.
    const run = s.runs.find((r) => r.id === s.batchRunId);
    return run?.metrics[run.metrics.length - 1]?.values;
  });
  if (latest?.filtered_groups === undefined) return null;
  const filled = latest.filled_with_filtered ?? 0;
  return (
    <p className="small" data-testid="dapo-filtered">
      DAPO dynamic sampling: <strong>{latest.filtered_groups}</strong> groups with all-equal scores dropped this iteration over {latest.dynamic_sampling_rounds ?? 1} rollout
      round(s)
      {filled > 0 ? `; ${filled} dropped group(s) refilled the batch (extra-round cap reached)` : ''}.
    </p>
  );
}
