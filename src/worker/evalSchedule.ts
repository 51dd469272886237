// When the worker scores held-out prompts, and how many. An evaluation generates
// count × (samplesPerPrompt + 1) responses (the sampled draws plus one greedy) and trains nothing,
// so it costs about that many rows of rollout. Sized at three rollout batches of rows it stays
// under 10% of training time at the default evalEvery of 10. Measured for "Learn arithmetic"
// (the numbers are in the page handoff): at four batches (51 prompts) an evaluation took 0.55–0.67
// of an iteration on the CPU backend and on Node's Dawn, but ~1.0 in Chromium's SwiftShader page
// (6.5 s vs 6.3 s an iteration: 9.4%), too close to the bound; three batches keep it near 7%.
import type { PpoConfig } from '../rl/config.ts';

/** Draws per held-out prompt at the rollout temperature (the "sampled accuracy" averages 4). */
export const EVAL_SAMPLES_PER_PROMPT = 4;
/** Rows generated per evaluation ≈ EVAL_ROWS_PER_BATCH_ROW × the rollout batch. */
export const EVAL_ROWS_PER_BATCH_ROW = 3;
export const EVAL_MIN_PROMPTS = 4;
export const EVAL_MAX_PROMPTS = 64;

/** Whether an evaluation is due after `done` completed iterations (0 = before the first). */
export function evalDue(done: number, evalEvery: number): boolean {
  return evalEvery > 0 && Number.isInteger(done) && done >= 0 && done % evalEvery === 0;
}

/** Held-out prompts and draws per prompt for one evaluation under `config`. */
export function evalSize(config: Pick<PpoConfig, 'promptsPerBatch' | 'samplesPerPrompt'>): { count: number; samplesPerPrompt: number } {
  const batch = config.promptsPerBatch * config.samplesPerPrompt;
  const rows = EVAL_ROWS_PER_BATCH_ROW * batch;
  const count = Math.round(rows / (EVAL_SAMPLES_PER_PROMPT + 1));
  return { count: Math.min(EVAL_MAX_PROMPTS, Math.max(EVAL_MIN_PROMPTS, count)), samplesPerPrompt: EVAL_SAMPLES_PER_PROMPT };
}
