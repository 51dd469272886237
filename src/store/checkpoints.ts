// Actor checkpoints from the page: export the current weights as safetensors (via the worker's
// `snapshot`), and load a file back. A file is checked here with the same parser and checks the
// worker applies, so a wrong file is refused with its reason before anything is sent and the
// current run keeps going; the worker validates again before it swaps weights.
import { t } from '../i18n/index.ts';
import { parseCheckpoint } from '../model/checkpoint.ts';
import { quoted } from '../model/safetensors.ts';
import { getTask } from '../tasks/index.ts';
import { downloadBlob } from './download.ts';
import { useApp } from './appStore.ts';
import * as notices from './notices.ts';
import { trainer } from './trainerClient.ts';

/** Largest iteration reported by the active run (else the latest run), 0 before any. */
export function currentIteration(): number {
  const { runs, activeRunId } = useApp.getState();
  const run = runs.find((r) => r.id === activeRunId) ?? runs[runs.length - 1];
  const last = run?.metrics[run.metrics.length - 1];
  return last ? last.iter : 0;
}

export function actorFileName(task: string, iter: number): string {
  return `ppo-actor-${task}-iter${iter}.safetensors`;
}

export async function exportActor(): Promise<void> {
  const s = useApp.getState();
  const bytes = await trainer.models.snapshot();
  // null: no trainer (the notice says so) or the worker answered with an error (shown as well).
  if (!bytes) return;
  const name = actorFileName(s.config.task, currentIteration());
  downloadBlob(new Blob([bytes], { type: 'application/octet-stream' }), name);
  useApp.getState().setNotice({ tone: 'info', text: notices.actorExported(name, bytes.byteLength) });
}

/** Why `bytes` cannot be the actor for `task`, or null when it can. */
export function checkActorFile(bytes: Uint8Array, task: string): string | null {
  let ck: ReturnType<typeof parseCheckpoint>;
  try {
    ck = parseCheckpoint(bytes);
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
  if (ck.alphabet !== getTask(task).alphabet) return t('notices:checkpoints.otherTask', { fileTask: quoted(ck.task), task });
  if (ck.config.head !== 'lm') return t('notices:checkpoints.wrongHead', { head: ck.config.head });
  return null;
}

/** Whether the file became the actor (a refused file says why in the notice and changes nothing). */
export async function loadActorFile(file: File): Promise<boolean> {
  const s = useApp.getState();
  const buf = await file.arrayBuffer();
  const problem = checkActorFile(new Uint8Array(buf), s.config.task);
  if (problem) {
    s.setNotice({ tone: 'error', text: notices.checkpointRefused(file.name, problem) });
    return false;
  }
  // The worker rebuilds its trainer around the new weights, so what was running stops here and
  // the next Start begins a new run (kept apart in the charts).
  if (s.runState === 'running') await trainer.pause();
  if (!(await trainer.models.loadCheckpoint('actor', buf))) return false;
  useApp.getState().endRun();
  useApp.getState().setNotice({ tone: 'info', text: notices.actorLoaded(file.name) });
  return true;
}
