// LoRA steps on an HfModel end to end (src/model/hf/loraParams.ts with hfBackward.ts): fresh PEFT
// adapters leave the base model's log-probs unchanged bit for bit; then supervised steps on one
// (prompt, response) pair — loss = mean −log p over the response, AdamW over the flat adapter
// buffer with global-norm clipping — raise the response's mean log-prob at every step, on both
// backends, and WebGPU follows the float64 backend's trajectory (|Δ mean log-prob| ≤ 1e-3 at every
// step). The step size keeps the descent monotone: at lr 2e-2 the tiny model overshot (a token's
// log-prob fell from −3e-4 to −7.2 in one step on some seeds), and near such a cliff f32 rounding
// of ~1e-5 in the adapters moved the mean log-prob by 2e-3 — the trajectory, not the kernels.
import { describe, expect, it } from 'vitest';
import type { Backend } from '../../src/backend/backend.ts';
import { backwardToAdapters, disposeTape, responseLogprobsTaped } from '../../src/model/hf/hfBackward.ts';
import { HfModel } from '../../src/model/hf/hfModel.ts';
import { LORA_TARGETS } from '../../src/model/hf/lora.ts';
import { disposeLoraTrainable, loraOptimizerStep, newLoraTrainable, zeroLoraGrads } from '../../src/model/hf/loraParams.ts';
import { openHfFolder } from '../../src/model/hf/open.ts';
import { responseLogprobs } from '../../src/model/hf/scoring.ts';
import { synthesizeToMemory } from '../../src/model/hf/synthetic.ts';
import { cpuBackend, webgpuBackend } from '../helpers/backends.ts';
import { rng } from '../helpers/random.ts';

const STEPS = 12;
const HP = { lr: 5e-3, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0, maxGradNorm: 1 };

/** Mean log-prob of the response before each of STEPS steps, and after the last. */
async function train(be: Backend, seed: number): Promise<{ base: number[]; atInit: number[]; curve: number[] }> {
  const r = rng(seed);
  const folder = await synthesizeToMemory({ family: 'qwen3', dtype: 'F32', shards: 1, seed: r.nextU32() });
  const info = await openHfFolder(folder);
  const model = await HfModel.load(be, folder, info, 'f32');
  const V = info.arch.vocab;
  const ids = (n: number) => Array.from({ length: n }, () => r.nextU32() % V);
  const prompts = [ids(3)];
  const responses = [ids(5)];
  const n = responses[0].length;
  const t = newLoraTrainable(model, { r: 4, alpha: 8, rslora: false, targets: LORA_TARGETS }, r.nextU32());
  try {
    const base = (await responseLogprobs(model, prompts, responses)).logprobs[0];
    model.setAdapters(t.adapters);
    const atInit = (await responseLogprobs(model, prompts, responses)).logprobs[0];
    const gradLogprobs = be.tensor(new Float64Array(n).fill(-1 / n), [n]); // ∂(mean −log p)/∂log p
    const curve: number[] = [];
    for (let step = 0; step <= STEPS; step++) {
      const taped = responseLogprobsTaped(model, prompts, responses);
      if (step < STEPS) {
        zeroLoraGrads(be, t);
        backwardToAdapters(model, taped.tape, gradLogprobs, t.adapterGrads);
        be.dispose(loraOptimizerStep(be, t, HP));
      }
      const lp = await be.read(taped.logprobs);
      curve.push(lp.reduce((s, x) => s + x, 0) / n);
      disposeTape(model, taped.tape);
      be.dispose(taped.logprobs, taped.entropy);
    }
    be.dispose(gradLogprobs);
    return { base, atInit, curve };
  } finally {
    disposeLoraTrainable(be, t);
    model.dispose();
  }
}

describe('LoRA supervised steps on an HfModel (Qwen3)', () => {
  it('fresh adapters are the base model; the steps raise the response log-prob; WebGPU follows float64', async () => {
    const seed = 6100;
    const ref = await train(cpuBackend, seed);
    const gpu = await train(await webgpuBackend(), seed);
    for (const run of [ref, gpu]) {
      expect(run.atInit).toEqual(run.base);
      const first = run.curve[0];
      const last = run.curve[run.curve.length - 1];
      console.log(`[lora-sft] mean log-prob ${first.toFixed(4)} → ${last.toFixed(4)} over ${STEPS} steps`);
      expect(last - first).toBeGreaterThan(3);
      for (let i = 1; i < run.curve.length; i++) expect(run.curve[i], `step ${i}`).toBeGreaterThan(run.curve[i - 1]);
    }
    for (const [i, x] of gpu.curve.entries()) expect(Math.abs(x - ref.curve[i]), `step ${i}: ${x} vs ${ref.curve[i]}`).toBeLessThanOrEqual(1e-3);
  });
});

describe('the flat adapter buffer (loraParams.ts)', () => {
  it('A and B of every projection are disjoint views; weight decay covers exactly them; PEFT init', async () => {
    const be = cpuBackend;
    const r = rng(6200);
    const folder = await synthesizeToMemory({ family: 'llama', dtype: 'F32', shards: 1, seed: r.nextU32() });
    const info = await openHfFolder(folder);
    const model = await HfModel.load(be, folder, info, 'f32');
    const t = newLoraTrainable(model, { r: 3, alpha: 6, rslora: false, targets: ['q_proj', 'v_proj', 'down_proj'] }, 9);
    try {
      const views = t.adapters.layers.flatMap((layer) => Object.values(layer).flatMap((ad) => [ad.a, ad.b]));
      expect(views.length).toBe(info.arch.nLayer * 3 * 2);
      const [decay, params] = await be.readMany([t.decayMask, t.params]);
      const entries = views.reduce((s, v) => s + v.size, 0);
      expect(decay.reduce((s, x) => s + x, 0)).toBe(entries);
      // Marking each view's elements through the flat buffer: every element once, none shared.
      be.write(t.params, new Float64Array(t.size));
      for (const [i, v] of views.entries()) be.write(v, new Float64Array(v.size).fill(i + 1));
      const marked = await be.read(t.params);
      const counts = new Map<number, number>();
      for (const x of marked) counts.set(x, (counts.get(x) ?? 0) + 1);
      for (const [i, v] of views.entries()) expect(counts.get(i + 1), `view ${i}`).toBe(v.size);
      expect(Array.from(marked).every((x, i) => (x === 0) === (decay[i] === 0))).toBe(true);
      // PEFT's init, read before the marking: A within ±1/√in, B zero.
      t.adapters.layers.forEach((layer) => {
        for (const ad of Object.values(layer)) {
          const off = marked.indexOf(views.indexOf(ad.a) + 1);
          const a = params.subarray(off, off + ad.a.size);
          expect(Math.max(...a.map(Math.abs))).toBeLessThanOrEqual(1 / Math.sqrt(ad.a.shape[1]));
          const offB = marked.indexOf(views.indexOf(ad.b) + 1);
          expect(params.subarray(offB, offB + ad.b.size).every((x) => x === 0)).toBe(true);
        }
      });
    } finally {
      disposeLoraTrainable(be, t);
      model.dispose();
    }
  });
});
