// Every sentence the store shows in the page's notice bar (the trainer's, saved runs', checkpoint
// files'), as pure functions from a message or state to its text: one place to read them together,
// and to translate them.
import { adviceText } from '../worker/nanAdvice.ts';
import type { NonFiniteReport, PageToWorker, RewardFunctionReport, TrainerStage, WorkerToPage } from '../worker/protocol.ts';
import type { RunSequence } from './appStore.ts';

type Msg<T extends WorkerToPage['type']> = Extract<WorkerToPage, { type: T }>;

export const TRAINER_MISSING = 'The trainer worker could not start, so nothing will train; everything else on the page works.';

const plural = (n: number, one: string, many: string) => (n === 1 ? one : many);

/** A command's name as words: trainRewardModel → "Train reward model". */
export function commandLabel(type: PageToWorker['type']): string {
  const words = type.replace(/[A-Z]/g, (c) => ` ${c.toLowerCase()}`);
  return words.charAt(0).toUpperCase() + words.slice(1);
}

export function trainerMissing(type: PageToWorker['type']): string {
  return `${commandLabel(type)} requested. ${TRAINER_MISSING}`;
}

export function sendFailed(type: PageToWorker['type'], message: string): string {
  return `${commandLabel(type)} could not be sent to the trainer (${message}).`;
}

export function requestTimedOut(type: PageToWorker['type'], seconds: number): string {
  return `${commandLabel(type)}: the trainer did not answer within ${seconds} s. Try again; if it keeps happening, reload the page (runs and their charts are kept).`;
}

/** A request whose reply cannot come any more (the worker was replaced, or the run reset). */
export function requestLost(type: PageToWorker['type'], message: string): string {
  return `${commandLabel(type)}: no answer from the trainer (${message}).`;
}

export function stateNotSaved(problem: { label: string; message: string }): string {
  return `Trainer state not saved (${problem.label}: ${problem.message}). Training goes on and the run's charts are kept; after a reload it cannot resume past the last state saved.`;
}

export function deviceLost(msg: Msg<'deviceLost'>): string {
  const when = msg.iter === null ? '' : ` after ${msg.iter} ${plural(msg.iter, 'iteration', 'iterations')}${msg.stage ? `, during ${msg.stage}` : ''}`;
  return `The GPU device was lost (${msg.reason})${when}. Getting a new device and rebuilding the trainer from its last saved state…`;
}

export function deviceRecovered(msg: Msg<'deviceRecovered'>): string {
  const replay =
    msg.lostAt === null
      ? ''
      : ` ${msg.replayed} ${plural(msg.replayed, 'iteration is', 'iterations are')} replayed (lost at ${msg.lostAt}, restarted from the state saved at ${msg.fromIter}).`;
  return `The GPU device was lost and replaced (${msg.adapter}); the trainer was rebuilt from its last saved state.${replay}${msg.resumed ? '' : ' Press Start to continue.'}`;
}

export function deviceUnavailable(msg: Msg<'deviceUnavailable'>): string {
  return `The GPU device was lost and no new one came back (${msg.message}). The run's charts are kept; it can continue on the CPU backend.`;
}

export function nonFinitePaused(n: NonFiniteReport): string {
  return `Paused: iteration ${n.iter} produced a non-finite ${n.quantity} (${n.value}) in the ${n.stage} stage. The state from before it was restored and nothing charted is lost. Suggested fix: ${adviceText(n.advice)}.`;
}

/** The written reward function refused a sample: where, and that nothing was applied or lost. */
export function rewardFunctionPaused(r: RewardFunctionReport): string {
  return `Paused: the reward function was refused in iteration ${r.iter}: ${r.message}. That iteration was not applied (no weights changed) and nothing charted is lost; the sample is shown under Settings → Reward function. Edit the function and press Start to go on.`;
}

export function paused(reason: string): string {
  return `Paused: ${reason}`;
}

export function trainerError(message: string, stage?: TrainerStage): string {
  return `Trainer error${stage ? ` during ${stage}` : ''}: ${message}`;
}

/** A "Run both" stopped mid-arm by an error: which arm, how far it got, and what Start and Reset do. */
export function sequenceStopped(seq: RunSequence, done: number, error: string): string {
  const arm = seq.arms[seq.index];
  return `“${seq.preset}” (Run both) stopped at arm ${seq.index + 1} of ${seq.arms.length}, “${arm?.label ?? '?'}”, after ${done} of ${seq.budget} iterations. ${error}. Start retries this arm from iteration ${done}; Reset ends Run both (finished arms are kept).`;
}

export function sequenceDone(seq: RunSequence): string {
  return `"${seq.preset}" done: ${seq.arms.map((a) => a.label).join(' and ')} trained ${seq.budget} iterations each, overlaid in the charts.`;
}

export function budgetReached(budget: number | undefined): string {
  return `Reached the budget of ${budget ?? '?'} iterations. Start trains on past it; Reset begins a new run.`;
}

export function armInvalid(label: string, problems: string[]): string {
  return `Run both stopped: ${label}: ${problems.join('; ')}`;
}

export function noPreset(name: string): string {
  return `No preset named "${name}".`;
}

export function presetNotStarted(name: string, problems: string[]): string {
  return `"${name}" not started: ${problems.join('; ')}`;
}

/** What a resume names: the run and the iteration it goes on from. */
export function resumeTarget(runName: string, iter: number): string {
  return `“${runName}” from iteration ${iter}`;
}

export function resumeFailed(what: string, problem: { label: string; message: string }): string {
  return `Could not resume ${what} (${problem.label}: ${problem.message}). The run and its charts are kept; Start begins a new run.`;
}

export function resumed(what: string): string {
  return `Resumed ${what}.`;
}

export function sequenceAllTrained(seq: RunSequence): string {
  return `“${seq.preset}”: every arm has trained its ${seq.budget} iterations already.`;
}

/** The arm in progress could not resume after a reload (`why`) and trains again from the start. */
export function sequenceRetrains(why: string, armLabel: string): string {
  return `${why} Run both goes on: “${armLabel}” trains again from iteration 0.`;
}

export function cpuWithoutState(workerIter: number | null | undefined): string {
  return `Switched to the CPU backend; no saved state of the run was found${workerIter != null ? ` (the worker's last was at iteration ${workerIter})` : ''}, so Start begins a new run.`;
}

export function stateUnreadable(problem: { label: string; message: string }): string {
  return `The saved trainer state could not be read (${problem.label}: ${problem.message}). Runs and their charts are kept; the run starts over if you train it again.`;
}

export function runsNotRestored(e: unknown): string {
  return `Saved runs could not be restored: ${String(e)}`;
}

export function runsNotSaved(e: unknown): string {
  return `Runs could not be saved: ${String(e)}`;
}

export function batchesNotSaved(e: unknown): string {
  return `The teaching views' latest batches could not be saved (the runs are kept): ${String(e)}`;
}

export function batchesNotRestored(e: unknown): string {
  return `The teaching views' saved batches could not be read (the runs are kept): ${String(e)}`;
}

export function sequenceNotRestored(problem: string): string {
  return `The unfinished “Run both” could not be restored (${problem}). Its finished runs are kept.`;
}

export function actorExported(fileName: string, byteLength: number): string {
  return `Exported the actor as ${fileName} (${(byteLength / 1024).toFixed(0)} KiB safetensors).`;
}

export function checkpointRefused(fileName: string, problem: string): string {
  return `Checkpoint "${fileName}" not loaded: ${problem}. The current run is untouched.`;
}

export function actorLoaded(fileName: string): string {
  return `Loaded the actor from "${fileName}". Start or Step trains a new run from these weights.`;
}

/** The second tab's one line (tabOwner.ts): why Start is held and what frees it. */
export const TAB_READ_ONLY = 'Training is open in another tab of this page; this tab is read-only for runs until you close it or take over.';

export function tabTakenOver(): string {
  return 'Another tab of this page took over the runs: training here is paused and this tab is read-only for runs. Take over to train here again.';
}

/** The browser's answer to navigator.storage.persist(), for the page's footer. */
export function storagePersistence(persisted: boolean): string {
  return persisted
    ? 'Saved runs are kept in persistent storage: the browser will not clear them to free space.'
    : 'The browser did not grant persistent storage: it may clear saved runs when the disk runs low (export runs you want to keep).';
}

/** A QuotaExceededError (or another "storage is full" failure) on an IndexedDB write. */
export function isQuotaError(e: unknown): boolean {
  const name = typeof e === 'object' && e !== null && 'name' in e ? String((e as { name: unknown }).name) : '';
  const message = e instanceof Error ? e.message : String(e);
  return name === 'QuotaExceededError' || /quota/i.test(message);
}

/**
 * Storage is full: what of the run is saved and what is not. `metricsThrough`: iterations whose
 * metrics are in the database (null: none of this run's); `stateAt`: the iteration a saved trainer
 * state resumes from (null: none saved for this run).
 */
export function storageFull(saved: { metricsThrough: number | null; stateAt: number | null; unsavedState: boolean }): string {
  const metrics =
    saved.metricsThrough === null || saved.metricsThrough === 0 ? "none of the run's metrics are saved" : `the run's metrics up to iteration ${saved.metricsThrough} are saved`;
  const state = !saved.unsavedState
    ? ''
    : saved.stateAt === null
      ? '; its trainer state for resume is not'
      : `; its newest trainer state for resume is not (a reload resumes from iteration ${saved.stateAt})`;
  return `Storage is full: ${metrics}${state}. Free space or delete old runs; the charts in this tab are kept.`;
}

export function batchesStorageFull(): string {
  return "Storage is full: the teaching views' latest batches are not saved (the runs are). Free space or delete old runs.";
}
