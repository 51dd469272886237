// "Save run", "Open run…" and `?run=`: a run, its latest batch, its inspected iterations and its
// saved trainer state to one file (runFile.ts) and back. An opened run is a new run marked
// recorded: its charts, teaching views and inspector show what was recorded, and nothing trains it
// until "Continue training" loads the file's state (as a resume after a reload does). A refused
// file changes nothing.
import { create } from 'zustand';
import { useApp } from './appStore.ts';
import { downloadBlob } from './download.ts';
import { hackedOfferFor } from './hackedOffer.ts';
import { useInspection } from './inspection.ts';
import * as notices from './notices.ts';
import { fetchServedFile, RunFileError, tooLarge } from './fileChecks.ts';
import { type ClassQuestions, type RecordedRun, type RecordedState, RUN_FILE_MAX_BYTES, readRunFile, runFileText } from './runFile.ts';
import { dropRecordedFiles, followRecordedRuns, keepRecordedFile, loadRecordedFiles } from './recordedPersist.ts';
import { loadResumePoint, saveResumePoint } from './resume.ts';
import type { RunRecord } from './runs.ts';
import { trainer } from './trainerClient.ts';

/**
 * The trainer states of the recorded runs, by run id: from the file, in memory (after a reload the
 * file kept with the run brings it back, recordedPersist.ts).
 */
export const useRecordedStates = create<{ states: Record<string, RecordedState> }>(() => ({ states: {} }));

/** The question sets a teacher chose (Check yourself), by run id, saved with the run; in memory (a recorded run's come back with its file). */
export const useClassQuestions = create<{ byRun: Record<string, ClassQuestions[]> }>(() => ({ byRun: {} }));

/** Run `runId`'s question set for inspected iteration `iter` becomes `draw` (replacing one chosen before). */
export function chooseClassQuestions(runId: string, iter: number, draw: number): void {
  useClassQuestions.setState(({ byRun }) => ({ byRun: { ...byRun, [runId]: [...(byRun[runId] ?? []).filter((q) => q.iter !== iter), { iter, draw }] } }));
}

/** A file name from the run's name: letters, digits and dashes, so every system keeps it as it is. */
export function runFileName(run: Pick<RunRecord, 'name'>, at = new Date()): string {
  const stem = run.name
    .normalize('NFKD')
    .replace(/[^\p{L}\p{N}]+/gu, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60);
  return `ppo-run-${stem || 'run'}-${at.toISOString().slice(0, 19).replace(/[:T]/g, '-')}.json`;
}

/**
 * The trainer state to save with run `runId`: the one the page keeps for resuming when it is this
 * run's (saved every few iterations and at Pause), or the state of a recorded run's file.
 */
async function stateOf(runId: string): Promise<RecordedState | null> {
  const held = useRecordedStates.getState().states[runId];
  if (held) return held;
  try {
    const point = await loadResumePoint();
    return point && point.runId === runId ? { iter: point.iter, bytes: new Uint8Array(point.bytes) } : null;
  } catch {
    return null; // no storage: the run is saved without its state, as the notice says
  }
}

/** Downloads run `runId` as a run file and says its size; false when no such run exists. */
export async function saveRunFile(runId: string): Promise<boolean> {
  const s = useApp.getState();
  const run = s.runs.find((r) => r.id === runId);
  if (!run) return false;
  const traces = useInspection.getState().traces.filter((t) => t.runId === runId);
  const state = await stateOf(runId);
  // A set only for an iteration the file holds.
  const questions = (useClassQuestions.getState().byRun[runId] ?? []).filter((q) => traces.some((t) => t.trace.iter === q.iter));
  const text = runFileText(run, s.batches[runId], traces, { state, questions });
  const blob = new Blob([text], { type: 'application/json' });
  const fileName = runFileName(run);
  downloadBlob(blob, fileName);
  useApp.getState().setNotice({ tone: 'info', text: notices.runFileSaved(run.name, fileName, blob.size, run.metrics.length, traces.length, state?.iter ?? null) });
  return true;
}

/**
 * "Continue training" on a recorded run whose file holds a trainer state: the state becomes the
 * page's resume point and is resumed as after a reload (the run active again, its curve cut at the
 * state's iteration, training going on in the same record), and the run is no longer marked
 * recorded. A state the worker refuses is named and the run stays recorded.
 */
export async function continueRecorded(runId: string): Promise<boolean> {
  const s = useApp.getState();
  const run = s.runs.find((r) => r.id === runId);
  const state = useRecordedStates.getState().states[runId];
  if (!run || !state) return false;
  const savedAt = Date.now();
  try {
    await saveResumePoint(run, { runId, iter: state.iter, savedAt, backend: s.backend, wasRunning: false, bytes: state.bytes.slice().buffer });
  } catch (e) {
    s.setNotice({ tone: 'error', text: notices.runFileNotContinued(run.name, e) });
    return false;
  }
  s.setResume({ runId, runName: run.name, iter: state.iter, savedAt, wasRunning: false });
  if (!(await trainer.resume())) return false;
  useApp.getState().liveAgain(runId);
  useRecordedStates.setState(({ states }) => {
    const { [runId]: _done, ...rest } = states;
    return { states: rest };
  });
  // A live run again: its state is the page's resume point now, not the file's.
  await dropRecordedFiles([runId]).catch(() => undefined);
  return true;
}

/**
 * Opens a run file as a new recorded run, and says so in the notice bar; a refused file leaves the
 * page as it was. `message` is the notice's text (the no-WebGPU guide shows it inline).
 */
export async function openRunFile(file: Pick<File, 'name' | 'size' | 'text'>): Promise<OpenedRunFile> {
  return showRecorded(file.name, async () => {
    if (file.size > RUN_FILE_MAX_BYTES) throw tooLarge(RUN_FILE_MAX_BYTES);
    return file.text();
  });
}

/** The page's own copy of a run file served with it (`?run=`, viewLink.ts), as text. */
export const fetchServedRunFile = (path: string): Promise<string> => fetchServedFile(path, RUN_FILE_MAX_BYTES);

/**
 * Opens the run file at `path` served with the page (`?run=`). A link opened again (a reload)
 * shows the run it added the first time, with the file's inspected iterations, rather than a
 * second copy; a file changed since is added as a new run.
 */
export async function openServedRunFile(path: string, load: (path: string) => Promise<string> = fetchServedRunFile): Promise<OpenedRunFile> {
  return showRecorded(path, () => load(path));
}

/**
 * What a recorded run's file brings besides its record: its state, question sets and inspected
 * iterations (unless the run has its traces) and, when the file is `opened` (not restored after a
 * reload, where a live run's offer is not kept either), the hacked response to inspect.
 */
function attachRecorded(runId: string, rec: RecordedRun, opened: boolean): void {
  if (rec.state) useRecordedStates.setState(({ states }) => ({ states: { ...states, [runId]: rec.state! } }));
  if (rec.questions.length > 0) useClassQuestions.setState(({ byRun }) => ({ byRun: { ...byRun, [runId]: rec.questions } }));
  const inspection = useInspection.getState();
  if (!inspection.traces.some((t) => t.runId === runId)) for (const t of rec.traces) inspection.pushTrace({ ...t, runId });
  if (!opened) return;
  // The reward-hacking card's β = 0 run ends on a hack: offered as when the run was trained here.
  const run = useApp.getState().runs.find((r) => r.id === runId);
  const offer = rec.traces.map((t) => hackedOfferFor(run, t.trace)).find((o) => o !== null);
  if (offer) inspection.setHacked(offer);
}

let following = false;
/** Deleting a recorded run forgets its kept file, from the first recorded run of this page on. */
function followDeletions(): void {
  if (following) return;
  following = true;
  followRecordedRuns(useApp, (e) => console.warn('a deleted run’s file was not forgotten', e));
}

/**
 * After the saved runs are restored: each recorded run gets back what its kept file brings; a
 * kept file whose run is gone, or that no longer reads, is forgotten.
 */
export async function restoreRecordedRuns(): Promise<void> {
  let kept: Awaited<ReturnType<typeof loadRecordedFiles>>;
  try {
    kept = await loadRecordedFiles();
  } catch {
    return; // no storage: the runs show without their inspected iterations, as before
  }
  const runs = new Set(useApp.getState().runs.map((r) => r.id));
  const stale: string[] = [];
  for (const { runId, text } of kept) {
    if (!runs.has(runId)) {
      stale.push(runId);
      continue;
    }
    try {
      attachRecorded(runId, readRunFile(text), false);
    } catch {
      stale.push(runId);
    }
  }
  followDeletions();
  await dropRecordedFiles(stale).catch(() => undefined);
}

/** What opening a run file gave: the run added, or null and the refusal's words; `ownModel` when the file went to "Your own model". */
export interface OpenedRunFile {
  run: RunRecord | null;
  message: string;
  ownModel?: boolean;
}

/**
 * Reads a run (`read` gives the file's text; it and readRunFile throw RunFileError to refuse it),
 * adds it as a recorded run, keeps the file with it, and says which. A run of a model of your own
 * goes to the panel that shows those (hfFlows.ts), shown there, which says what it made of it.
 */
async function showRecorded(fileName: string, read: () => Promise<string>): Promise<OpenedRunFile> {
  const s = useApp.getState();
  let text = '';
  try {
    text = await read();
    const rec = readRunFile(text);
    const same = s.runs.find((r) => r.recorded?.file === fileName && r.recorded.savedAt === rec.savedAt);
    const run = same ?? s.addRecordedRun(rec, fileName);
    attachRecorded(run.id, rec, true);
    followDeletions();
    // Kept with the run, so a reload brings back what the record alone does not hold. A failed
    // write leaves the run as it is for this visit.
    if (!same) await keepRecordedFile(run.id, text).catch((e: unknown) => console.warn('the run file was not kept for the next visit', e));
    if (same) {
      if (!same.visible) s.toggleRun(same.id);
      s.viewRun(same.id);
    }
    const message = notices.runFileOpened(run.name, fileName, run.metrics.length, rec.savedAt, rec.state?.iter ?? null);
    s.setNotice({ tone: 'info', text: message });
    return { run, message };
  } catch (e) {
    if (e instanceof RunFileError && e.reason === 'own-model-run') return openOwnModelRun(fileName, text);
    const message = notices.runFileRefused(fileName, e);
    s.setNotice({ tone: 'error', text: message });
    return { run: null, message };
  }
}

/** A run of a model of your own, opened where the page shows those ("Your own model", hfFlows.ts). */
async function openOwnModelRun(fileName: string, text: string): Promise<OpenedRunFile> {
  const { hfFlows } = await import('./hfFlows.ts');
  const { useHfTrain } = await import('./hfTrain.ts');
  const opened = await (await hfFlows()).openRunFile({ name: fileName, size: text.length, text: async () => text });
  const message = opened ? notices.ownModelRunOpened(fileName) : (useHfTrain.getState().runFileNotice?.text ?? '');
  useApp.getState().setNotice({ tone: opened ? 'info' : 'error', text: message });
  return { run: null, message, ownModel: opened };
}
