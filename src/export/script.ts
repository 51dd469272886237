// The launch script of a planned job (no dataset or Parquet code, so the page can preview it cheaply).
import { openRlhfCommand, type OpenRlhfCommand } from './openrlhf.ts';
import type { JobOptions, JobPlan } from './plan.ts';
import { renderOpenRlhf, renderVerl } from './shell.ts';
import { verlCommand, type VerlCommand } from './verl.ts';

export const scriptName = (engine: JobOptions['engine']) => (engine === 'verl' ? 'run_verl.sh' : 'run_openrlhf.sh');

export function engineCommand(plan: JobPlan): VerlCommand | OpenRlhfCommand {
  return plan.options.engine === 'verl' ? verlCommand(plan) : openRlhfCommand(plan);
}

export function renderScript(plan: JobPlan, command: VerlCommand | OpenRlhfCommand): string {
  const header = { task: plan.config.task, gpus: plan.options.gpus, model: plan.options.model };
  return command.engine === 'verl' ? renderVerl(command, header) : renderOpenRlhf(command, header);
}
