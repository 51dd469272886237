// "Run both" across a reload. The sequence in progress (the preset, every arm's config, the arm
// training and its run) is kept in localStorage whenever it changes, and cleared when it ends.
// After a reload the page offers to go on: the arm in progress resumes from its saved trainer state
// (resume.ts) when one is kept for its run, else it trains again from the start; the arms after
// it follow as before. A record that does not read back as a valid sequence is dropped and named.
import { checkConfig } from '../rl/config.ts';
import type { ResumeOffer, RunSequence, SequenceOffer } from './statusTypes.ts';
import type { RunRecord } from './runs.ts';
import { MAX_BUDGET } from './presetRun.ts';
import { ownsRuns } from './tabOwner.ts';

export const SEQUENCE_KEY = 'ppo-playground-run-both';

/** Most arms a preset has ever had is 2; a stored record with more than this is not ours. */
const MAX_ARMS = 16;

function storage(): Storage | null {
  try {
    return typeof localStorage === 'undefined' ? null : localStorage;
  } catch {
    return null; // storage disabled: Run both simply does not survive a reload
  }
}

export function saveSequence(seq: RunSequence | null): void {
  const ls = storage();
  if (!ls || !ownsRuns()) return; // another tab owns the runs (tabOwner.ts)
  try {
    if (seq) ls.setItem(SEQUENCE_KEY, JSON.stringify(seq));
    else ls.removeItem(SEQUENCE_KEY);
  } catch {
    // Quota: the sequence is only a convenience; its runs are saved in IndexedDB.
  }
}

/** The stored sequence, checked field by field; throws a named error for a record that is not one. */
export function parseSequence(text: string): RunSequence {
  let x: unknown;
  try {
    x = JSON.parse(text);
  } catch {
    throw new Error('Run both record: not JSON');
  }
  const r = x as Partial<RunSequence> | null;
  if (!r || typeof r !== 'object' || Array.isArray(r)) throw new Error('Run both record: not an object');
  if (typeof r.preset !== 'string' || r.preset.length === 0 || r.preset.length > 200) throw new Error('Run both record: preset name missing');
  if (!Array.isArray(r.arms) || r.arms.length < 1 || r.arms.length > MAX_ARMS) throw new Error('Run both record: arms missing');
  const arms = r.arms.map((a: unknown, i) => {
    const arm = a as { label?: unknown; config?: unknown } | null;
    if (!arm || typeof arm.label !== 'string' || typeof arm.config !== 'object' || arm.config === null) throw new Error(`Run both record: arm ${i + 1} malformed`);
    const { config, problems } = checkConfig(arm.config);
    if (!config) throw new Error(`Run both record: arm ${i + 1} (${arm.label.slice(0, 40)}): ${problems[0].message}`);
    return { label: arm.label, config };
  });
  if (!Number.isInteger(r.index) || (r.index as number) < 0 || (r.index as number) >= arms.length) throw new Error('Run both record: arm index out of range');
  if (!Number.isInteger(r.budget) || (r.budget as number) < 1 || (r.budget as number) > MAX_BUDGET)
    throw new Error(`Run both record: budget must be an integer in [1, ${MAX_BUDGET}]`);
  if (r.runId !== undefined && typeof r.runId !== 'string') throw new Error('Run both record: run id malformed');
  if (r.comparison !== undefined && (!Number.isInteger(r.comparison) || (r.comparison as number) < 0)) throw new Error('Run both record: comparison malformed');
  return {
    preset: r.preset,
    arms,
    index: r.index as number,
    budget: r.budget as number,
    ...(r.runId ? { runId: r.runId } : {}),
    ...(r.comparison === undefined ? {} : { comparison: r.comparison }),
  };
}

/** The sequence a closed page left unfinished, or null; a broken record is removed and reported. */
export function loadSequence(): { seq: RunSequence | null; problem?: string } {
  const ls = storage();
  let text: string | null;
  try {
    text = ls?.getItem(SEQUENCE_KEY) ?? null;
  } catch {
    return { seq: null }; // storage the browser refuses to read holds no sequence we can resume
  }
  if (text === null) return { seq: null };
  try {
    return { seq: parseSequence(text) };
  } catch (e) {
    try {
      ls?.removeItem(SEQUENCE_KEY);
    } catch {
      // the broken record stays; it is reported either way
    }
    return { seq: null, problem: e instanceof Error ? e.message : String(e) };
  }
}

/**
 * What to offer for an unfinished sequence, given the runs and the saved trainer state: the arm in
 * progress resumes when the saved state is its run's; an arm whose run reached the budget counts
 * as finished, so the next arm is offered (fresh); null when every arm is finished.
 */
export function sequenceOffer(seq: RunSequence, runs: readonly Pick<RunRecord, 'id' | 'metrics'>[], resume: Pick<ResumeOffer, 'runId' | 'iter'> | null): SequenceOffer | null {
  const bare = (index: number): RunSequence => ({
    preset: seq.preset,
    arms: seq.arms,
    budget: seq.budget,
    index,
    ...(seq.comparison === undefined ? {} : { comparison: seq.comparison }),
  });
  const run = seq.runId ? runs.find((r) => r.id === seq.runId) : undefined;
  if (run && run.metrics.length >= seq.budget) return seq.index + 1 < seq.arms.length ? { seq: bare(seq.index + 1), done: 0, resumable: false } : null;
  if (run && resume?.runId === run.id) return { seq: { ...bare(seq.index), runId: run.id }, done: resume.iter, resumable: true };
  return { seq: bare(seq.index), done: 0, resumable: false };
}
