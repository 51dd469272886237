// The "Scale it up" panel's words for a job that cannot be built, from the structure plan.ts gives
// (the CLI prints the same problems in English). Worded at call time from the `exportJob` namespace,
// which the panel loads before it renders.
import { formatNumber, t } from '../i18n/index.ts';
import { JobError, jobProblemMessage, type JobProblem } from '../export/plan.ts';
import { problemText } from './settingsText.ts';

/** A job problem in the page's language. */
export function jobProblemText(p: JobProblem): string {
  switch (p.kind) {
    case 'config':
      return t('exportJob:problem.config', { problems: p.problems.map((c) => problemText(c)).join('\n') });
    case 'range':
      return t('exportJob:problem.range', { field: p.field, value: p.value, min: p.min, max: p.max });
    case 'trainRowsBelowBatch':
      return t('exportJob:problem.trainRowsBelowBatch', { trainRows: p.trainRows, promptsPerBatch: p.promptsPerBatch });
    case 'gpuSplit':
      return t('exportJob:problem.gpuSplit', {
        key: 'gpus',
        gpus: p.gpus,
        sequences: p.sequences,
        allowed: p.allowed.map((g) => formatNumber(g)).join(t('exportJob:listSeparator')),
      });
    case 'verlGpuSplit':
      return t('exportJob:problem.verlGpuSplit', { key: 'gpus', gpus: p.gpus, sequences: p.sequences });
    case 'model':
      // Only the CLI sets a model section (the panel exports with the script's default model), so
      // this English message never reaches the page.
      return jobProblemMessage(p);
  }
}

/** What a failed plan or build says: a job problem worded here, anything else as it came. */
export function jobErrorText(e: unknown): string {
  if (e instanceof JobError) return jobProblemText(e.problem);
  return e instanceof Error ? e.message : String(e);
}
