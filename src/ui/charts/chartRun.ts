// What a metric chart draws of a run: its name, colour and metric history, and the settings its
// notes read (chartNotes.ts). A playground run (RunRecord) is one; so is a run of your own model,
// whose rows name their numbers in the same vocabulary (src/rl/metricNames.ts).
import type { MetricPoint } from '../../store/runs.ts';
import type { NoteConfig } from './chartNotes.ts';

export interface ChartRun {
  id: string;
  name: string;
  color: string;
  metrics: readonly MetricPoint[];
  /** The settings the notes read; null where they are not known (then no note speaks for every run). */
  config: NoteConfig | null;
  /** Drawn dashed: an earlier run beside the current one. */
  dashed?: boolean;
  /** A run of your own model (its help adds what differs there: ownModelHelpNote). */
  ownModel?: boolean;
}

/** The runs' settings for the notes: every run's, or none when some run's are not known. */
export function noteConfigs(runs: readonly ChartRun[]): NoteConfig[] {
  const configs = runs.flatMap((r) => (r.config ? [r.config] : []));
  return configs.length === runs.length ? configs : [];
}
