// Shared fixtures of the model tests: tiny configs, parameters drawn larger than GPT-2's init (so
// every nonlinearity is exercised and greedy argmaxes are well separated), left-padded inputs.
import type { Backend } from '../../src/backend/backend.ts';
import type { Tensor } from '../../src/backend/tensor.ts';
import type { GptConfig } from '../../src/model/config.ts';
import { Gpt } from '../../src/model/gpt.ts';
import { paramLayout } from '../../src/model/params.ts';
import type { RewardModel } from '../../src/rl/rewardModel/rewardModel.ts';
import type { Rng } from '../../src/util/rng.ts';

/** Random parameters (float32-representable, so both backends see identical numbers). */
export function randomParams(cfg: GptConfig, r: Rng, weightStd = 0.2): Float64Array {
  const lay = paramLayout(cfg);
  const flat = new Float64Array(lay.total);
  for (const e of lay.entries) {
    const isGain = /ln_\d\.weight$|ln_f\.weight$/.test(e.name);
    const isBias = e.name.endsWith('.bias');
    for (let i = 0; i < e.size; i++) {
      flat[e.offset + i] = isGain ? 1 + 0.2 * r.normal() : isBias ? 0.1 * r.normal() : weightStd * r.normal();
    }
  }
  return Float64Array.from(new Float32Array(flat));
}

export interface PaddedInputs {
  B: number;
  S: number;
  tokens: number[];
  attnMask: number[];
  positions: number[];
}

/** Rows left-padded by pads[b] tokens (PAD = 0), random real tokens in [3, V). */
export function paddedInputs(r: Rng, V: number, S: number, pads: number[]): PaddedInputs {
  const B = pads.length;
  const tokens: number[] = [];
  const attnMask: number[] = [];
  const positions: number[] = [];
  for (let b = 0; b < B; b++) {
    for (let t = 0; t < S; t++) {
      const real = t >= pads[b];
      tokens.push(real ? r.int(3, V) : 0);
      attnMask.push(real ? 1 : 0);
      positions.push(real ? t - pads[b] : 0);
    }
  }
  return { B, S, tokens, attnMask, positions };
}

export function upload(be: Backend, x: PaddedInputs): { tokens: Tensor; attnMask: Tensor; positions: Tensor } {
  return {
    tokens: be.tensor(x.tokens, [x.B, x.S], 'i32'),
    attnMask: be.tensor(x.attnMask, [x.B, x.S]),
    positions: be.tensor(x.positions, [x.B, x.S], 'i32'),
  };
}

export function modelWith(be: Backend, cfg: GptConfig, params: ArrayLike<number>): Gpt {
  return new Gpt(be, cfg, params);
}

/** The Gpt behind a reward model of the 'gpt' family, for tests that read or set its flat buffers (gradients, parameters in place). */
export function rewardGpt(rm: RewardModel): Gpt {
  if (!(rm.model instanceof Gpt)) throw new Error("rewardGpt: the reward model is not of the 'gpt' family");
  return rm.model;
}
