// Every weight's gradient through an HfModel (full training: src/model/hf/hfBackward.ts
// backwardToWeights over src/model/hf/fullParams.ts' flat buffers), on fresh synthetic folders
// (TEST_SEED) of Llama 3 (rope scaling, untied head), Qwen2 (q/k/v bias), Qwen3 (q/k norm, tied
// head), GPT-2 (LayerNorm with biases, learned positions, tied head):
// - on the float64 backend, against central finite differences of L = Σ c·logprob (random c on the
//   response tokens, 0 on padding; the five-point stencil at h = 1e-5), |fd − g| ≤ 1e-6·(1 + |g|),
//   at two entries of every weight (dense weights, biases, norms, q/k norms, positions, the
//   embedding at a row the batch reads, the head); a tied head's gradient (LM head + embedding
//   rows) is one sum;
// - on WebGPU, every weight's gradient against the float64 backend's: normwise
//   |Δ| ≤ 2e-4·max|g| per weight (as the adapter gradients; worst seen printed); GPT-2's key bias,
//   whose gradient is 0 in exact arithmetic (no rope: softmax ignores q·b_k), on the model's max|g|.
// An AdamW step over the flat buffer moves the model: the loss on the batch goes down.
import { describe, expect, it } from 'vitest';
import type { Backend } from '../../src/backend/backend.ts';
import type { Tensor } from '../../src/backend/tensor.ts';
import { backwardToWeights, disposeTape, responseLogprobsTaped } from '../../src/model/hf/hfBackward.ts';
import { flatOptimizerStep, zeroFlatGrads } from '../../src/model/hf/flatOptimizer.ts';
import { disposeFullTrainable, type FullTrainable, newFullTrainable } from '../../src/model/hf/fullParams.ts';
import { HfModel } from '../../src/model/hf/hfModel.ts';
import { openHfFolder } from '../../src/model/hf/open.ts';
import { responseLogprobs } from '../../src/model/hf/scoring.ts';
import { type SyntheticFamily, synthesizeToMemory } from '../../src/model/hf/synthetic.ts';
import { weightLeaves } from '../../src/model/hf/weightLayout.ts';
import { cpuBackend, webgpuBackend } from '../helpers/backends.ts';
import { centralDifference } from '../helpers/finiteDifference.ts';
import { expectClose, rng } from '../helpers/random.ts';

const FAMILIES: SyntheticFamily[] = ['llama3', 'qwen2', 'qwen3', 'gpt2'];
const A = 4;

interface Setup {
  t: FullTrainable;
  prompts: number[][];
  responses: number[][];
  c: Float64Array; // (B·A) ∂L/∂logprob, 0 on padding
}

async function setup(be: Backend, family: SyntheticFamily, seed: number): Promise<Setup> {
  const r = rng(seed);
  const folder = await synthesizeToMemory({ family, dtype: 'F32', shards: 1, seed: r.nextU32() });
  const info = await openHfFolder(folder);
  const loaded = await HfModel.load(be, folder, info, 'f32');
  const t = await newFullTrainable(loaded);
  loaded.dispose();
  const V = info.arch.vocab;
  const ids = (n: number) => Array.from({ length: n }, () => r.nextU32() % V);
  const prompts = [ids(3), ids(1)];
  const responses = [ids(2), ids(4)];
  const c = new Float64Array(2 * A);
  responses.forEach((resp, b) => {
    for (let j = 0; j < resp.length; j++) c[b * A + j] = r.normal();
  });
  return { t, prompts, responses, c };
}

/** Every weight's gradient of L = Σ c·logprob, per weight view (in weightLeaves order). */
async function gradients(s: Setup): Promise<Float64Array[]> {
  const be = s.t.model.be;
  zeroFlatGrads(be, s.t);
  const taped = responseLogprobsTaped(s.t.model, s.prompts, s.responses);
  backwardToWeights(s.t.model, taped.tape, be.tensor(s.c, [s.c.length]), s.t.weightGrads);
  disposeTape(s.t.model, taped.tape);
  be.dispose(taped.logprobs, taped.entropy);
  return be.readMany(weightLeaves(s.t.weightGrads));
}

async function loss(s: Setup): Promise<number> {
  const { logprobs } = await responseLogprobs(s.t.model, s.prompts, s.responses);
  return logprobs.reduce((sum, row, b) => sum + row.reduce((acc, x, j) => acc + x * s.c[b * A + j], 0), 0);
}

/** A name for a weight view, for failure messages. */
function names(t: FullTrainable): Map<Tensor, string> {
  const w = t.model.weights;
  const out = new Map<Tensor, string>();
  for (const [i, p] of w.embed.entries()) out.set(p, `embed[${i}]`);
  for (const [i, p] of w.head.entries()) if (!out.has(p)) out.set(p, `head[${i}]`);
  if (w.positions) out.set(w.positions, 'positions');
  out.set(w.finalNorm.w, 'finalNorm.w');
  if (w.finalNorm.b) out.set(w.finalNorm.b, 'finalNorm.b');
  w.layers.forEach((L, l) => {
    for (const [key, v] of Object.entries(L)) {
      if (!v) continue;
      if ('w' in v) {
        out.set(v.w, `layer ${l} ${key}.w`);
        if (v.b) out.set(v.b, `layer ${l} ${key}.b`);
      } else out.set(v as Tensor, `layer ${l} ${key}`);
    }
  });
  return out;
}

describe('every weight’s gradient through an HfModel (full training)', () => {
  it.each(FAMILIES)('%s on the float64 backend: central finite differences at entries of every weight', async (family) => {
    const be = cpuBackend;
    const s = await setup(be, family, 5600 + FAMILIES.indexOf(family));
    try {
      const grads = await gradients(s);
      const leaves = weightLeaves(s.t.model.weights);
      const label = names(s.t);
      const host = await be.read(s.t.params);
      const embedRows = new Set([...s.prompts.flat(), ...s.responses.flat()]);
      const D = s.t.model.arch.dModel;
      const pick = rng(78);
      const h = 1e-5;
      const lossAt = async (x: Float64Array) => {
        be.write(s.t.params, x);
        return loss(s);
      };
      for (const [li, leaf] of leaves.entries()) {
        const isEmbed = s.t.model.weights.embed.includes(leaf);
        for (let n = 0; n < 2; n++) {
          // an embedding entry of a row the batch reads (others have no gradient unless the head is tied)
          const rows = [...embedRows];
          const i = isEmbed ? rows[pick.int(0, rows.length)] * D + pick.int(0, D) : pick.int(0, leaf.size);
          const at = s.t.offsets.get(leaf)! + i;
          const fd = await centralDifference((d) => {
            const nudged = Float64Array.from(host);
            nudged[at] += d;
            return lossAt(nudged);
          }, h);
          const g = grads[li][i];
          expect(Math.abs(fd - g), `${label.get(leaf)}[${i}]: fd ${fd} vs ${g}`).toBeLessThanOrEqual(1e-6 * (1 + Math.abs(g)));
        }
      }
      be.write(s.t.params, host);
      // the check has teeth: every weight gets a gradient well away from zero, except GPT-2's key
      // bias: without rope it adds q·b_k to every score of a query alike, which softmax ignores
      for (const [li, leaf] of leaves.entries()) {
        const top = Math.max(...Array.from(grads[li], Math.abs));
        if (family === 'gpt2' && / k\.b$/.test(label.get(leaf)!)) expect(top, label.get(leaf)).toBeLessThan(1e-12);
        else expect(top, label.get(leaf)).toBeGreaterThan(1e-4);
      }
    } finally {
      disposeFullTrainable(s.t);
    }
  });

  it.each(FAMILIES)('%s on WebGPU: every weight’s gradient equals the float64 backend’s', async (family) => {
    const seed = 5700 + FAMILIES.indexOf(family);
    const gpu = await setup(await webgpuBackend(), family, seed);
    const ref = await setup(cpuBackend, family, seed);
    try {
      const got = await gradients(gpu);
      const want = await gradients(ref);
      const label = names(ref.t);
      const leaves = weightLeaves(ref.t.model.weights);
      let worst = 0;
      const modelScale = Math.max(...want.map((w) => w.reduce((m, v) => Math.max(m, Math.abs(v)), 0)));
      want.forEach((w, i) => {
        // a gradient that is zero in exact arithmetic (GPT-2's key bias) is judged on the model's scale
        const own = w.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
        const size = own < 1e-12 ? modelScale : own;
        const err = w.reduce((m, v, j) => Math.max(m, Math.abs(v - got[i][j])), 0);
        worst = Math.max(worst, err / Math.max(size, 1e-30));
        expectClose(got[i], w, 0, 2e-4 * size, `${label.get(leaves[i])} gradient`);
      });
      console.log(`[precision] ${family} full-weight gradients, WebGPU vs float64: worst |Δ| / max|g| ${worst.toExponential(2)}`);
    } finally {
      disposeFullTrainable(gpu.t);
      disposeFullTrainable(ref.t);
    }
  });

  it('AdamW steps over the flat buffer raise the batch’s log-likelihood (Qwen3, WebGPU)', async () => {
    const be = await webgpuBackend();
    const s = await setup(be, 'qwen3', 5800);
    try {
      // L = −mean log p of the response tokens: c = −1/N on each
      const N = s.responses.reduce((n, r) => n + r.length, 0);
      s.c = Float64Array.from(s.c, (x) => (x === 0 ? 0 : -1 / N));
      const before = await loss(s);
      const hp = { lr: 1e-2, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0.01, maxGradNorm: 1 };
      for (let step = 0; step < 5; step++) {
        await gradients(s);
        be.dispose(flatOptimizerStep(be, s.t, hp));
      }
      const after = await loss(s);
      expect(s.t.steps).toBe(5);
      // the mean NLL fell by over a third of a nat in 5 steps (the random model starts near log V)
      expect(after).toBeLessThan(before - 0.3);
    } finally {
      disposeFullTrainable(s.t);
    }
  });
});
