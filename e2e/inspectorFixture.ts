// A small iteration trace for the inspector's e2e spec: random log-probs and values from a fixed
// seed, a response with a masked position in the middle (the scan's carry), its stored
// experience from the same float64 recomputation the page runs. `config` picks other knobs (a
// group estimator: no critic, values 0).
import { DEFAULT_CONFIG, type PpoConfig } from '../src/rl/config.ts';
import { type IterationTrace, knobsFromConfig, type MinibatchTrace, recomputeTrace } from '../src/rl/inspect/index.ts';
import { epochMinibatches } from '../src/rl/minibatch.ts';
import type { CapturedTrace } from '../src/store/inspection.ts';
import { Rng } from '../src/util/rng.ts';

export const FIXTURE = { B: 8, A: 6, P: 4, holeRow: 1, shortRow: 2 };

export function fixtureTrace(seed = 11, newSpread = 0.3, config: Partial<PpoConfig> = {}): CapturedTrace {
  const r = new Rng(seed);
  const { B, A, P, holeRow, shortRow } = FIXTURE;
  const knobs = knobsFromConfig({ ...DEFAULT_CONFIG, ...config }, 0.05);
  const critic = knobs.advantageEstimator === 'gae';
  const mask = new Float64Array(B * A);
  for (let b = 0; b < B; b++) {
    const len = b === shortRow ? 2 : 3 + r.int(0, A - 2);
    for (let a = 0; a < A; a++) mask[b * A + a] = b === holeRow ? 1 : a < len ? 1 : 0;
  }
  mask[holeRow * A + 3] = 0;
  const n = () => r.normal();
  const oldLogprobs = Float64Array.from({ length: B * A }, () => -Math.abs(n()) * 1.5 - 0.05);
  const refLogprobs = Float64Array.from(oldLogprobs, (x) => Math.min(-1e-4, x + n() * 0.4));
  const rolloutLogprobs = Float64Array.from(oldLogprobs, (x) => x + n() * 0.05);
  const values = Float64Array.from({ length: B * A }, () => (critic ? n() * 0.7 : 0));
  const group = Int32Array.from({ length: B }, (_, b) => Math.floor(b / 4));
  const scores = Float64Array.from({ length: B }, () => (r.next() < 0.5 ? 1 : -1));
  const minibatches: MinibatchTrace[] = [];
  for (let epoch = 0; epoch < 2; epoch++) {
    epochMinibatches(B, 2, 7, 3, epoch).forEach((rows, index) => {
      const newLogprobs = new Float64Array(rows.length * A);
      const newValues = new Float64Array(rows.length * A);
      rows.forEach((b, i) => {
        for (let a = 0; a < A; a++) {
          newLogprobs[i * A + a] = oldLogprobs[b * A + a] + n() * newSpread;
          newValues[i * A + a] = values[b * A + a] + n() * 0.3;
        }
      });
      minibatches.push({ epoch, index, rows, newLogprobs, newValues: critic ? newValues : null, stored: null });
    });
  }
  const responseTokens = Int32Array.from({ length: B * A }, () => r.int(3, 10));
  // Each response ends on EOS (id 2), as the sampler ends them.
  const EOS = 2;
  for (let b = 0; b < B; b++) {
    let last = -1;
    for (let a = 0; a < A; a++) if (mask[b * A + a] !== 0) last = a;
    if (last >= 0) responseTokens[b * A + last] = EOS;
  }
  // Prompts "g+h=" of four characters, the same ids the prompts' text shows (id 10 + digit, 20 for +, 21 for =).
  const promptTokens = Int32Array.from({ length: B * P }, (_, i) => [10 + Math.floor(i / P / 4) + 3, 20, 10 + Math.floor(i / P / 4) + 4, 21][i % P]);
  const promptMask = new Float64Array(B * P).fill(1);
  const trace: IterationTrace = {
    iter: 3,
    B,
    A,
    knobs,
    responseTokens,
    promptTokens,
    promptMask,
    actionMask: mask,
    group,
    scores,
    rolloutLogprobs,
    oldLogprobs,
    refLogprobs,
    values,
    stored: { kl: new Float64Array(B * A), rewards: new Float64Array(B * A), advantages: new Float64Array(B * A), returns: new Float64Array(B * A), tisWeights: null },
    minibatches,
  };
  const rec = recomputeTrace(trace);
  trace.stored = { kl: rec.kl, rewards: rec.rewards, advantages: rec.advantages, returns: rec.returns, tisWeights: null };
  const tokenText = Array.from(responseTokens, (tok, i) => (mask[i] === 0 ? '' : tok === EOS ? '<eos>' : String(tok)));
  const prompts = Array.from({ length: B }, (_, b) => `${group[b] + 3}+${group[b] + 4}=`);
  return { runId: 'fixture-run', trace, prompts, tokenText };
}
