// The whole-model gradient checks' fixture, shared by the CPU finite-difference test
// (tests/integration/model_grad.test.ts) and the WebGPU one (tests/gpu/model_grad.test.ts): a loss
// L = Σ out ⊙ W for a fixed random W, on a batch of a full row, a padded row and a row with one
// real token, for every head.
import type { GptConfig, HeadKind } from '../../src/model/config.ts';
import { lastTokenPositions, type ForwardOptions, type Gpt } from '../../src/model/gpt.ts';
import { paddedInputs, randomParams, upload, type PaddedInputs } from './model.ts';
import { randn, rng } from './random.ts';

export const HEADS: HeadKind[] = ['lm', 'value', 'reward'];
export const cfgFor = (head: HeadKind): GptConfig => ({ vocabSize: 11, nLayer: 2, nHead: 2, dModel: 32, maxSeq: 8, head });
export const S = 6;
const PADS = [0, 2, 5]; // a full row, a padded row, a row with one real token

function outShape(head: HeadKind, B: number, V: number): number[] {
  return head === 'lm' ? [B, S, V] : head === 'value' ? [B, S] : [B];
}

/** Inputs, parameters, W and forward options of one head's check, drawn from seed `salt`. */
export function gradFixture(head: HeadKind, salt: number) {
  const cfg = cfgFor(head);
  const r = rng(salt);
  const x = paddedInputs(r, cfg.vocabSize, S, PADS);
  const params = randomParams(cfg, r);
  const W = randn(
    r,
    outShape(head, PADS.length, cfg.vocabSize).reduce((a, b) => a * b, 1),
  );
  const opts: ForwardOptions = head === 'reward' ? { scoreAt: lastTokenPositions(x.attnMask, x.B, S) } : {};
  return { r, x, params, W, opts };
}

/** L = Σ out ⊙ W for a fixed random W; returns L, out and the gradients (host, by name). */
export async function lossAndGrads(model: Gpt, x: PaddedInputs, W: Float64Array, opts: ForwardOptions) {
  const be = model.be;
  const t = upload(be, x);
  model.zeroGrad();
  const { out, cache } = model.forward(t.tokens, t.attnMask, t.positions, opts);
  const gOut = be.tensor(W, out.shape);
  model.backward(cache, gOut);
  const [o, g] = await be.readMany([out, model.grads]);
  be.dispose(out, gOut, t.tokens, t.attnMask, t.positions);
  let L = 0;
  for (let i = 0; i < o.length; i++) L += o[i] * W[i];
  const grads = new Map(model.layout.entries.map((e) => [e.name, g.slice(e.offset, e.offset + e.size)]));
  return { L, out: o, grads };
}
