// Runs and their metric histories survive reloads in IndexedDB (one record per run). Saving is
// throttled: a busy trainer appends metrics several times a second, the database needs them about
// once a second. The first change schedules a save SAVE_DELAY_MS later and later changes ride on
// it (a debounce that restarted on every change never saved while the charts kept updating).
import { useApp } from './appStore.ts';
import { followBatches, loadBatches } from './batchPersist.ts';
import { RUNS, withStores } from './db.ts';
import * as notices from './notices.ts';
import { checkResumePoint, deleteResumePoint, noteSavedRuns, savedOf } from './resume.ts';
import { claimRuns, ownsRuns, requestPersistence } from './tabOwner.ts';
import { loadSequence, saveSequence, sequenceOffer } from './sequencePersist.ts';
import type { RunRecord } from './runs.ts';

const SAVE_DELAY_MS = 800;

export async function loadRuns(): Promise<RunRecord[]> {
  const req = await withStores([RUNS], 'readonly', (tx) => tx.objectStore(RUNS).getAll());
  return (req.result as RunRecord[]).sort((a, b) => a.createdAt - b.createdAt);
}

export async function saveRuns(runs: readonly RunRecord[]): Promise<void> {
  await withStores([RUNS], 'readwrite', (tx) => {
    const store = tx.objectStore(RUNS);
    // Replace the whole set so deleted runs disappear too.
    store.clear();
    for (const r of runs) store.put(r);
  });
  noteSavedRuns(runs);
}

/** A failed save of the run list: a full disk names what of the active run is saved. */
function runsNotSavedText(e: unknown): string {
  const s = useApp.getState();
  const id = s.activeRunId ?? s.runs.at(-1)?.id;
  return notices.isQuotaError(e) && id ? notices.storageFull({ ...savedOf(id), unsavedState: false }) : notices.runsNotSaved(e);
}

/** Ownership came to this tab after another tab had it: what it wrote is read back first. */
async function reloadFromDatabase(): Promise<void> {
  const s = useApp.getState();
  try {
    const saved = await loadRuns();
    noteSavedRuns(saved);
    if (s.runState !== 'running') s.restoreRuns(saved);
  } catch (e) {
    s.setNotice({ tone: 'warn', text: notices.runsNotRestored(e) });
  }
  await checkResumePoint();
}

let starting: Promise<void> | null = null;

/**
 * Restores saved runs, then keeps the database in step with the store. Returns when restored.
 * Only the tab that owns the runs writes (tabOwner.ts); `pause` stops training when another tab
 * takes them over.
 */
export function startPersistence(opts: { pause?: () => void } = {}): Promise<void> {
  if (typeof indexedDB === 'undefined') return Promise.resolve();
  // A second call (React's development double effect) waits for the first.
  starting ??= persist(opts);
  return starting;
}

async function persist(opts: { pause?: () => void }): Promise<void> {
  await claimRuns({
    reload: reloadFromDatabase,
    pause: () => {
      opts.pause?.();
      useApp.getState().setNotice({ tone: 'warn', text: notices.tabTakenOver() });
    },
  });
  if (ownsRuns()) void requestPersistence();
  try {
    const saved = await loadRuns();
    noteSavedRuns(saved);
    const s = useApp.getState();
    // Runs begun before the database answered come after the restored ones.
    if (saved.length > 0) s.restoreRuns([...saved, ...s.runs.filter((r) => !saved.some((x) => x.id === r.id))]);
  } catch (e) {
    useApp.getState().setNotice({ tone: 'warn', text: notices.runsNotRestored(e) });
  }
  await restoreBatches();
  let timer: ReturnType<typeof setTimeout> | null = null;
  useApp.subscribe((state, prev) => {
    if (state.runs === prev.runs) return;
    // A deleted run takes its saved trainer state with it.
    if (!ownsRuns()) return; // another tab's runs: this tab writes nothing (tabOwner.ts)
    if (state.resume && !state.runs.some((r) => r.id === state.resume!.runId)) {
      state.setResume(null);
      void deleteResumePoint().catch(() => {});
    }
    if (timer) return;
    timer = setTimeout(() => {
      timer = null;
      if (!ownsRuns()) return;
      saveRuns(useApp.getState().runs).catch((e: unknown) => useApp.getState().setNotice({ tone: 'warn', text: runsNotSavedText(e) }));
    }, SAVE_DELAY_MS);
  });
  await checkResumePoint();
  checkSequence();
  // From here on the store's "Run both" is the stored one (cleared when it ends).
  useApp.subscribe((state, prev) => {
    if (state.sequence !== prev.sequence) saveSequence(state.sequence);
  });
}

/** After the runs: each run's latest batch for the teaching views, then the database follows the store. */
async function restoreBatches(): Promise<void> {
  const warn = (text: string) => useApp.getState().setNotice({ tone: 'warn', text });
  let saved: Awaited<ReturnType<typeof loadBatches>> = {};
  try {
    saved = await loadBatches();
    useApp.getState().restoreBatches(saved);
  } catch (e) {
    warn(notices.batchesNotRestored(e));
  }
  followBatches(useApp, saved, (e) => warn(notices.isQuotaError(e) ? notices.batchesStorageFull() : notices.batchesNotSaved(e)));
}

/** After the runs and the resume point: a "Run both" the closed page left unfinished becomes an offer. */
export function checkSequence(): void {
  const s = useApp.getState();
  const { seq, problem } = loadSequence();
  if (problem) s.setNotice({ tone: 'warn', text: notices.sequenceNotRestored(problem) });
  if (!seq) return;
  const offer = sequenceOffer(seq, s.runs, s.resume);
  if (!offer) saveSequence(null);
  s.setSequenceOffer(offer);
}
