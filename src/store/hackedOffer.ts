// The reward-hacking preset's β = 0 arm ends on a hack worth reading: the page captures the trace
// of its budget's last iteration (start { captureLast }) and offers the inspector on the response
// hackedSample picks. These rules say which runs do that and what the offer holds.
import { hackedSample } from '../rl/inspect/hackedSample.ts';
import type { IterationTrace } from '../rl/inspect/trace.ts';
import { REWARD_HACKING } from '../rl/presets.ts';
import type { RunRecord } from './runs.ts';

/** One response of one captured iteration: what "Inspect a hacked sample" opens. */
export interface HackedOffer {
  runId: string;
  iter: number;
  /** Batch row of the response. */
  row: number;
}

/** A run of the reward-hacking preset with no KL in its reward (β = 0) and a budget to end at. */
export function capturesHackAtEnd(run: RunRecord | undefined): boolean {
  if (!run || run.preset !== REWARD_HACKING || !run.budget) return false;
  return !run.config.klInReward || run.config.klCoef === 0;
}

/** The offer for a trace of such a run's last budgeted iteration (0-based: budget − 1); null for any other. */
export function hackedOfferFor(run: RunRecord | undefined, trace: IterationTrace): HackedOffer | null {
  if (!run || !capturesHackAtEnd(run) || trace.iter !== (run.budget as number) - 1) return null;
  const row = hackedSample(trace);
  return row < 0 ? null : { runId: run.id, iter: trace.iter, row };
}
