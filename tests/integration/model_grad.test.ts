// Whole-model gradient checks for the lm, value and reward heads on the CPU (float64): analytic
// gradients vs central finite differences, a few random elements of EVERY parameter tensor.
// WebGPU against these gradients: tests/gpu/model_grad.test.ts.
import { describe, expect, it } from 'vitest';
import type { ForwardOptions, Gpt } from '../../src/model/gpt.ts';
import { cpuBackend } from '../helpers/backends.ts';
import { modelWith, upload, type PaddedInputs } from '../helpers/model.ts';
import { cfgFor, gradFixture, HEADS, lossAndGrads, S } from '../helpers/modelGrad.ts';
import { expectClose } from '../helpers/random.ts';

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
  const fixture = (salt: number) => gradFixture(head, salt);

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
    for (const e of model.layout.entries)
      expect(
        grads.get(e.name)!.some((v) => v !== 0),
        `${e.name} has a gradient`,
      ).toBe(true);
  });

  // Only the reward head reads a position per row (defined, not skipped, for the others).
  if (head === 'reward')
    it('rejects a missing or out-of-range read position', async () => {
      const { x, params } = fixture(30);
      const model = modelWith(cpuBackend, cfg, params);
      const t = upload(cpuBackend, x);
      expect(() => model.forward(t.tokens, t.attnMask, t.positions)).toThrow(/scoreAt/);
      expect(() => model.forward(t.tokens, t.attnMask, t.positions, { scoreAt: [0, 1, S] })).toThrow(/outside/);
    });
});
