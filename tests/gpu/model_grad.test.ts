// Whole-model gradients on WebGPU (float32) for the lm, value and reward heads: forward vs the CPU
// within 1e-5 relative, and gradients of every parameter tensor within 1e-4 relative (plus an
// absolute floor of 1e-5 × the tensor's largest gradient, for elements that are near zero through
// cancellation). tests/integration/model_grad.test.ts checks the CPU gradients against finite
// differences.
import { describe, it } from 'vitest';
import { cpuBackend, webgpuBackend } from '../helpers/backends.ts';
import { modelWith, upload } from '../helpers/model.ts';
import { cfgFor, gradFixture, HEADS, lossAndGrads } from '../helpers/modelGrad.ts';
import { expectClose } from '../helpers/random.ts';

describe.each(HEADS)('GPT %s head', (head) => {
  const cfg = cfgFor(head);
  const fixture = (salt: number) => gradFixture(head, salt);

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
});
