// Dawn and wgpu train the same preset from the same seed and must agree. Run by tests/wgpu/run.ts
// under Deno: the wgpu run happens in this process (Deno's WebGPU), the Dawn run in a Node child
// (the `webgpu` package), both at once. Both records are written to .reports/cross-{dawn,wgpu}.json.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CROSS_ITERS, CROSS_PRESET, CROSS_SEED, crossRun, REPORTS, startDawnRun } from './crossRun.ts';

/**
 * Equal on both engines: what is drawn or counted, not computed in float32 arithmetic. The same
 * WGSL draws each token from the same uniform against the same cumulative probabilities, so the
 * samples (and with them the rewards, lengths, EOS rates and held-out accuracies) are equal unless
 * a uniform falls within float32 rounding of a bin edge.
 */
const EXACT = new Set([
  'iter',
  'reward_mean',
  'reward_min',
  'reward_max',
  'response_length_mean',
  'eos_rate',
  'update_steps',
  'actor_lr',
  'critic_lr',
  'gpu_submits',
  'gpu_readbacks',
  'gpu_dispatches',
]);
/** Wall-clock times: they measure the engine, not the training. */
const IGNORED = /^time_/;
/**
 * Everything else (losses, KL, entropy, advantages, gradient norms) within
 * |dawn − wgpu| ≤ ATOL + RTOL·max(|dawn|, |wgpu|). Why they differ at all: the two compilers (Tint →
 * SwiftShader, Naga → lavapipe's LLVM) may fuse a·b + c into an FMA or not, and WGSL lets exp and
 * log differ by a few ULPs between implementations (exp: 3 + 2|x| ULP; log: 2⁻²¹ absolute near 1).
 * One ULP of a log-prob of magnitude 4 is 4.8e-7; KL and the losses are means of differences of
 * such log-probs, so their error is absolute, of the operands' size, not relative to the small
 * result: ATOL = 1e-5 (≈ 20 such ULPs). Norms and sums grow with the model; ten AdamW steps carry
 * each iteration's rounding into the next weights: RTOL = 1e-4. Measured (seed 7, 10 iterations,
 * Dawn on SwiftShader vs wgpu on lavapipe): largest absolute difference 4.9e-6 (actor grad norm
 * 2.563, relative 1.9e-6), KL 3e-8, policy loss 1e-7.
 */
const ATOL = 1e-5;
const RTOL = 1e-4;

function close(a: number, b: number): boolean {
  return Math.abs(a - b) <= ATOL + RTOL * Math.max(Math.abs(a), Math.abs(b));
}

describe(`"${CROSS_PRESET}" trained on Dawn and on wgpu`, () => {
  it(`${CROSS_ITERS} iterations from one seed: equal samples, rewards and held-out scores; float metrics within ${ATOL} + ${RTOL}·|x|`, { timeout: 600_000 }, async () => {
    mkdirSync(REPORTS, { recursive: true });
    const [dawn, wgpu] = await Promise.all([startDawnRun(), crossRun(CROSS_SEED)]);
    writeFileSync(join(REPORTS, 'cross-wgpu.json'), JSON.stringify(wgpu));
    console.log(`[cross] seed ${CROSS_SEED}: Dawn on ${dawn.adapter} ${dawn.seconds.toFixed(1)} s, wgpu on ${wgpu.adapter} ${wgpu.seconds.toFixed(1)} s`);
    expect(dawn.engine).toBe('dawn');
    expect(wgpu.engine).toBe('wgpu');
    expect(wgpu.iterations.length).toBe(CROSS_ITERS);
    expect(dawn.iterations.length).toBe(CROSS_ITERS);
    expect(wgpu.evalBefore, 'held-out scores before training').toEqual(dawn.evalBefore);
    let worst = { key: '', iter: -1, diff: 0 };
    for (let i = 0; i < CROSS_ITERS; i++) {
      const d = dawn.iterations[i];
      const w = wgpu.iterations[i];
      expect(w.tokens, `sampled tokens, iteration ${i}`).toEqual(d.tokens);
      expect(w.scores, `rewards, iteration ${i}`).toEqual(d.scores);
      expect(Object.keys(w.metrics).sort(), `metric names, iteration ${i}`).toEqual(Object.keys(d.metrics).sort());
      for (const [k, dv] of Object.entries(d.metrics)) {
        if (IGNORED.test(k)) continue;
        const wv = w.metrics[k];
        if (EXACT.has(k)) expect(wv, `${k}, iteration ${i}`).toBe(dv);
        else {
          expect(Number.isFinite(wv), `${k}, iteration ${i}: ${wv}`).toBe(true);
          if (!close(dv, wv)) expect.unreachable(`${k}, iteration ${i}: Dawn ${dv}, wgpu ${wv} (|Δ| ${Math.abs(dv - wv)} > ${ATOL} + ${RTOL}·|x|)`);
          if (Math.abs(dv - wv) > worst.diff) worst = { key: k, iter: i, diff: Math.abs(dv - wv) };
        }
      }
    }
    expect(wgpu.evalAfter, 'held-out scores after training').toEqual(dawn.evalAfter);
    console.log(`[cross] largest float difference: ${worst.key} at iteration ${worst.iter}, |Δ| = ${worst.diff.toExponential(2)}`);
  });
});
