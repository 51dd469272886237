// The page's SFT run (src/rl/sftRun.ts: runSft, behind "1 · SFT" and `npm run pretrain`) in either
// model family: the character model's own Gpt, or the same weights on HfModel as the GPT-2 they are
// (src/rl/trainerModels.ts). Both start from the same initialisation, follow the task's recipe through
// two phases, evaluate greedily after each and write the same checkpoint format.
// Bounds: on the float64 CPU backend the losses agree within 1e-12 (the two sum a gradient norm in
// another order), the greedy samples and their metrics are equal, and the checkpoints' float32 weights
// are at most one float32 rounding apart (2^-23 of the larger magnitude, at least 2^-23 · 2^-10 near
// zero: the key bias, whose gradient is zero in exact arithmetic, moves by rounding noise, ~1e-17).
// On WebGPU the f32 kernels differ: losses within 1e-5 and weights within 1e-4, the bounds
// tests/gpu/sft_run_backends.test.ts sets WebGPU against float64 (measured, this file's printout:
// losses 4.8e-7 and weights 4e-7 on SwiftShader, 2.4e-7 and 3e-7 on lavapipe).
import { describe, expect, it } from 'vitest';
import type { Backend } from '../../src/backend/backend.ts';
import { parseCheckpoint } from '../../src/model/checkpoint.ts';
import { runSft, type SftPhaseEval, type SftRunOptions } from '../../src/rl/sftRun.ts';
import type { ModelFamily } from '../../src/rl/trainerModels.ts';
import { BACKENDS } from '../helpers/backends.ts';
import { expectClose } from '../helpers/random.ts';

const OPTS: SftRunOptions = { task: 'arithmetic', dims: { nLayer: 2, nHead: 2, dModel: 32 }, seed: 5, phaseSteps: 3, evalPrompts: 8 };

async function sft(be: Backend, family: ModelFamily) {
  const losses: number[] = [];
  const evals: SftPhaseEval[] = [];
  const { bytes, meta } = await runSft(
    be,
    { ...OPTS, family },
    {
      onProgress: (p) => losses.push(p.loss),
      onPhaseEnd: (e) => {
        evals.push(e);
      },
    },
  );
  return { losses, evals, meta, ck: parseCheckpoint(bytes) };
}

describe.each(BACKENDS)('SFT in either model family on %s', (name, makeBackend) => {
  const cpu = name === 'cpu';

  it('gpt and hf give the same losses, greedy samples and weights', { timeout: 240_000 }, async () => {
    const be = await makeBackend();
    const gpt = await sft(be, 'gpt');
    const hf = await sft(be, 'hf');
    expect(gpt.losses.length).toBeGreaterThanOrEqual(4); // two phases of up to 3 steps
    expect(hf.evals.map((e) => e.phase)).toEqual(gpt.evals.map((e) => e.phase));
    expect(hf.meta).toEqual(gpt.meta);
    expectClose(hf.losses, gpt.losses, cpu ? 1e-12 : 0, cpu ? 1e-12 : 1e-5, 'SFT losses');
    if (cpu) {
      for (const [i, e] of hf.evals.entries()) {
        expect(e.samples, `phase ${i} samples`).toEqual(gpt.evals[i].samples);
        expect(e.metrics, `phase ${i} metrics`).toEqual(gpt.evals[i].metrics);
      }
    }
    expect(hf.ck.config).toEqual(gpt.ck.config);
    expect([...hf.ck.params.keys()]).toEqual([...gpt.ck.params.keys()]);
    let worst = 0;
    let moved = 0;
    for (const [key, t] of gpt.ck.params) {
      const u = hf.ck.params.get(key)!.data;
      for (let i = 0; i < t.data.length; i++) {
        const a = t.data[i];
        const b = u[i];
        moved += Math.abs(a);
        // float64: one float32 rounding of the larger magnitude; WebGPU: sft_run_backends.test.ts's absolute bound
        const bound = cpu ? 2 ** -23 * Math.max(Math.abs(a), Math.abs(b), 2 ** -10) : 1e-4;
        worst = Math.max(worst, Math.abs(a - b) / bound);
      }
    }
    console.log(
      `SFT gpt vs hf on ${be.label}: worst weight difference ${worst.toFixed(3)} of its bound, max |Δloss| ${Math.max(...hf.losses.map((l, i) => Math.abs(l - gpt.losses[i]))).toExponential(2)}`,
    );
    expect(moved).toBeGreaterThan(0);
    expect(worst).toBeLessThanOrEqual(1);
  });
});
