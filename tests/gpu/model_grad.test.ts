// Whole-model gradient checks for the lm, value and reward heads:
//   * CPU (float64) analytic gradients vs central finite differences, a few random elements of
//     EVERY parameter tensor;
//   * WebGPU (float32) forward vs CPU within 1e-5 relative, and gradients of every parameter
//     tensor within 1e-4 relative (plus an absolute floor of 1e-5 × the tensor's largest gradient,
//     for elements that are near zero through cancellation).
import { describe, expect, it } from 'vitest';
import type { GptConfig, HeadKind } from '../../src/model/config.ts';
import { lastTokenPositions, type ForwardOptions, type Gpt } from '../../src/model/gpt.ts';
import { cpuBackend, webgpuBackend } from '../helpers/backends.ts';
import { expectClose, randn, rng } from '../helpers/random.ts';
import { modelWith, paddedInputs, randomParams, upload, type PaddedInputs } from './model_helpers.ts';

const HEADS: HeadKind[] = ['lm', 'value', 'reward'];
const cfgFor = (head: HeadKind): GptConfig => ({ vocabSize: 11, nLayer: 2, nHead: 2, dModel: 32, maxSeq: 8, head });
const S = 6;
const PADS = [0, 2, 5]; // a full row, a padded row, a row with one real token

function outShape(head: HeadKind, B: number, V: number): number[] {
  return head === 'lm' ? [B, S, V] : head === 'value' ? [B, S] : [B];
}

/** L = Σ out ⊙ W for a fixed random W; returns L, out and the gradients (host, by name). */
async function lossAndGrads(model: Gpt, x: PaddedInputs, W: Float64Array, opts: ForwardOptions) {
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

async function lossOnly(model: Gpt, x: PaddedInputs, W: Float64Array, opts: ForwardOptions): Promise<number> {
  const be = model.be;
  const t = upload(be, x);
  const out = model.infer(t.tokens, t.attnMask, t.positions, opts);
  const o = await be.read(out);
  be.dispose(out, t.tokens, t.attnMask, t.positions);
  let L = 0;
  for (let i = 0; i < o.length; i++) L += o[i] * W[i];
  return L;
}

describe.each(HEADS)('GPT %s head', (head) => {
  const cfg = cfgFor(head);

  function fixture(salt: number) {
    const r = rng(salt);
    const x = paddedInputs(r, cfg.vocabSize, S, PADS);
    const params = randomParams(cfg, r);
    const W = randn(r, outShape(head, PADS.length, cfg.vocabSize).reduce((a, b) => a * b, 1));
    const opts: ForwardOptions = head === 'reward' ? { scoreAt: lastTokenPositions(x.attnMask, x.B, S) } : {};
    return { r, x, params, W, opts };
  }

  it('CPU analytic gradients match central finite differences in every parameter tensor', async () => {
    const { r, x, params, W, opts } = fixture(10 + HEADS.indexOf(head));
    const model = modelWith(cpuBackend, cfg, params);
    const { grads } = await lossAndGrads(model, x, W, opts);
    const h = 1e-5;
    let checked = 0;
    for (const e of model.layout.entries) {
      for (let k = 0; k < 3; k++) {
        const i = r.int(0, e.size);
        const p = Float64Array.from(params);
        p[e.offset + i] = params[e.offset + i] + h;
        cpuBackend.write(model.params, p);
        const Lp = await lossOnly(model, x, W, opts);
        p[e.offset + i] = params[e.offset + i] - h;
        cpuBackend.write(model.params, p);
        const Lm = await lossOnly(model, x, W, opts);
        const fd = (Lp - Lm) / (2 * h);
        expectClose([grads.get(e.name)![i]], [fd], 1e-5, 1e-7, `${head} ∂L/∂${e.name}[${i}]`);
        checked++;
      }
    }
    cpuBackend.write(model.params, params);
    expect(checked).toBe(3 * model.layout.entries.length);
    // Some gradient is non-trivial in every tensor except, for the lm head, none are skipped.
    for (const e of model.layout.entries) expect(grads.get(e.name)!.some((v) => v !== 0), `${e.name} has a gradient`).toBe(true);
  });

  it('WebGPU forward and gradients match the CPU reference for every parameter tensor', async () => {
    const { x, params, W, opts } = fixture(20 + HEADS.indexOf(head));
    const gpuBe = await webgpuBackend();
    const ref = await lossAndGrads(modelWith(cpuBackend, cfg, params), x, W, opts);
    const model = modelWith(gpuBe, cfg, params);
    const got = await lossAndGrads(model, x, W, opts);
    expectClose(got.out, ref.out, 1e-5, 1e-5, `${head} forward`);
    for (const e of model.layout.entries) {
      const want = ref.grads.get(e.name)!;
      const maxAbs = want.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
      expectClose(got.grads.get(e.name)!, want, 1e-4, 1e-5 * maxAbs, `${head} grad ${e.name}`);
    }
    // Backward accumulates: a second pass without zeroGrad doubles the gradients.
    const t = upload(gpuBe, x);
    const { out, cache } = model.forward(t.tokens, t.attnMask, t.positions, opts);
    const gOut = gpuBe.tensor(W, out.shape);
    model.backward(cache, gOut);
    const twice = await gpuBe.read(model.grads);
    const e = model.layout.byName.get('h.0.attn.c_attn.weight')!;
    const want = ref.grads.get(e.name)!.map((v) => 2 * v);
    const maxAbs = want.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
    expectClose(twice.slice(e.offset, e.offset + e.size), want, 1e-4, 1e-5 * maxAbs, `${head} accumulated grad`);
    gpuBe.dispose(out, gOut, t.tokens, t.attnMask, t.positions);
    model.dispose();
  });

  // Only the reward head reads a position per row (defined, not skipped, for the others).
  if (head === 'reward') it('rejects a missing or out-of-range read position', async () => {
    const { x, params } = fixture(30);
    const model = modelWith(cpuBackend, cfg, params);
    const t = upload(cpuBackend, x);
    expect(() => model.forward(t.tokens, t.attnMask, t.positions)).toThrow(/scoreAt/);
    expect(() => model.forward(t.tokens, t.attnMask, t.positions, { scoreAt: [0, 1, S] })).toThrow(/outside/);
  });
});
