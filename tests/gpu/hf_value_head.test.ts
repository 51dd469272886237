// The critic on an HfModel: a value head (src/model/hf/valueHead.ts) on the rows that score each
// response column, its gradient and the critic adapters' (hfBackward.ts backwardFromRows), on
// fresh synthetic Qwen3 and Qwen2 folders (TEST_SEED):
// - float64 backend: L = Σ c·value (c random on response tokens, 0 on padding) against central
//   finite differences (five-point stencil) at entries of the head and of every adapter,
//   |fd − g| ≤ 1e-6·(1 + |g|);
// - WebGPU against the float64 backend: values |Δ| ≤ 1e-4, every gradient normwise ≤ 2e-4·max|g|;
// - the experience's rows (scoring.ts responseRows, no tape kept) equal the tape's bit for bit.
import { describe, expect, it } from 'vitest';
import type { Backend } from '../../src/backend/backend.ts';
import type { Tensor } from '../../src/backend/tensor.ts';
import { backwardFromRows, disposeTape, responseRowsTaped } from '../../src/model/hf/hfBackward.ts';
import { HfModel } from '../../src/model/hf/hfModel.ts';
import { LORA_TARGETS } from '../../src/model/hf/lora.ts';
import { disposeLoraTrainable, type LoraTrainable, newLoraTrainable } from '../../src/model/hf/loraParams.ts';
import { openHfFolder } from '../../src/model/hf/open.ts';
import { responseRows } from '../../src/model/hf/scoring.ts';
import { type SyntheticFamily, synthesizeToMemory } from '../../src/model/hf/synthetic.ts';
import { type ValueHead, valueHeadBackward, valueHeadForward, valueHeadInit } from '../../src/model/hf/valueHead.ts';
import { cpuBackend, webgpuBackend } from '../helpers/backends.ts';
import { centralDifference } from '../helpers/finiteDifference.ts';
import { expectClose, randn, rng } from '../helpers/random.ts';

const f32 = (x: ArrayLike<number>) => Float64Array.from(new Float32Array(x));
const FAMILIES: SyntheticFamily[] = ['qwen3', 'qwen2'];

interface Critic {
  be: Backend;
  model: HfModel;
  t: LoraTrainable;
  head: ValueHead;
  headGrads: ValueHead;
  prompts: number[][];
  responses: number[][];
  c: Float64Array;
}

async function critic(be: Backend, family: SyntheticFamily, seed: number): Promise<Critic> {
  const r = rng(seed);
  const folder = await synthesizeToMemory({ family, dtype: 'F32', shards: 1, seed: r.nextU32() });
  const info = await openHfFolder(folder);
  const model = await HfModel.load(be, folder, info, 'f32');
  const V = info.arch.vocab;
  const ids = (n: number) => Array.from({ length: n }, () => r.nextU32() % V);
  const t = newLoraTrainable(model, { r: 2, alpha: 4, rslora: false, targets: LORA_TARGETS }, r.nextU32());
  be.write(t.params, f32(randn(r, t.size, 0.3))); // trained adapters: B ≠ 0
  model.setAdapters(t.adapters);
  const init = valueHeadInit(info.arch.dModel, r.nextU32(), 0.3);
  const head = { w: be.tensor(init.w, [1, info.arch.dModel]), b: be.tensor([0.1], [1]) };
  const headGrads = { w: be.zeros([1, info.arch.dModel]), b: be.zeros([1]) };
  const responses = [ids(3), ids(1)];
  const c = new Float64Array(6);
  responses.forEach((resp, b) => {
    for (let j = 0; j < resp.length; j++) c[b * 3 + j] = r.normal();
  });
  return { be, model, t, head, headGrads, prompts: [ids(2), ids(4)], responses, c };
}

async function values(k: Critic): Promise<Float64Array> {
  const tape = responseRowsTaped(k.model, k.prompts, k.responses);
  const v = valueHeadForward(k.be, k.head, tape.scored);
  const out = await k.be.read(v);
  k.be.dispose(v);
  disposeTape(k.model, tape);
  return out;
}

async function gradients(k: Critic): Promise<{ values: Float64Array; adapters: Float64Array; w: Float64Array; b: Float64Array }> {
  const be = k.be;
  const tape = responseRowsTaped(k.model, k.prompts, k.responses);
  const v = valueHeadForward(be, k.head, tape.scored);
  const gradValues = be.tensor(k.c, [k.c.length]);
  const gRows = valueHeadBackward(be, k.head, tape.scored, gradValues, k.headGrads);
  backwardFromRows(k.model, tape, gRows, k.t.adapterGrads);
  const [vals, adapters, w, b] = await be.readMany([v, k.t.grads, k.headGrads.w, k.headGrads.b]);
  be.dispose(v, gradValues);
  disposeTape(k.model, tape);
  return { values: vals, adapters, w, b };
}

function dispose(k: Critic): void {
  k.be.dispose(k.head.w, k.head.b, k.headGrads.w, k.headGrads.b);
  disposeLoraTrainable(k.be, k.t);
  k.model.dispose();
}

describe('the critic on an HfModel: value head and adapters', () => {
  it.each(FAMILIES)('%s on the float64 backend: central finite differences', async (family) => {
    const k = await critic(cpuBackend, family, 8100 + FAMILIES.indexOf(family));
    try {
      const g = await gradients(k);
      const loss = async () => (await values(k)).reduce((s, v, i) => s + v * k.c[i], 0);
      const h = 1e-5;
      const check = async (tensor: Tensor, host: Float64Array, i: number, analytic: number, what: string) => {
        const at = async (d: number) => {
          const nudged = Float64Array.from(host);
          nudged[i] += d;
          cpuBackend.write(tensor, nudged);
          return loss();
        };
        const fd = await centralDifference(at, h);
        cpuBackend.write(tensor, host);
        expect(Math.abs(fd - analytic), `${what}[${i}]: fd ${fd} vs ${analytic}`).toBeLessThanOrEqual(1e-6 * (1 + Math.abs(analytic)));
      };
      const pick = rng(3);
      const w = await cpuBackend.read(k.head.w);
      for (let n = 0; n < 4; n++) {
        const i = pick.int(0, w.length);
        await check(k.head.w, w, i, g.w[i], 'head w');
      }
      await check(k.head.b, Float64Array.of(0.1), 0, g.b[0], 'head b');
      expect(g.b[0]).toBeCloseTo(
        k.c.reduce((s, x) => s + x, 0),
        12,
      ); // ∂L/∂b = Σ c
      const params = await cpuBackend.read(k.t.params);
      const live = Array.from(params.keys()).filter((i) => g.adapters[i] !== 0);
      expect(live.length).toBeGreaterThan(100);
      for (let n = 0; n < 24; n++) {
        const i = live[pick.int(0, live.length)];
        await check(k.t.params, params, i, g.adapters[i], 'adapters');
      }
    } finally {
      dispose(k);
    }
  });

  it.each(FAMILIES)('%s on WebGPU: values and every gradient equal the float64 backend’s', async (family) => {
    const seed = 8200 + FAMILIES.indexOf(family);
    const gpu = await critic(await webgpuBackend(), family, seed);
    const ref = await critic(cpuBackend, family, seed);
    try {
      const got = await gradients(gpu);
      const want = await gradients(ref);
      const active = Array.from(want.values.keys()).filter((i) => ref.c[i] !== 0);
      expectClose(
        active.map((i) => got.values[i]),
        active.map((i) => want.values[i]),
        0,
        1e-4,
        'values',
      );
      for (const key of ['adapters', 'w', 'b'] as const) {
        const size = want[key].reduce((m, v) => Math.max(m, Math.abs(v)), 0);
        expectClose(got[key], want[key], 0, 2e-4 * size, `gradient of ${key}`);
      }
    } finally {
      dispose(gpu);
      dispose(ref);
    }
  });

  it.each(FAMILIES)('%s: the experience’s rows without a tape are the tape’s rows bit for bit, on both backends', async (family) => {
    for (const be of [cpuBackend, await webgpuBackend()]) {
      const k = await critic(be, family, 8300 + FAMILIES.indexOf(family));
      try {
        const tape = responseRowsTaped(k.model, k.prompts, k.responses);
        const rows = responseRows(k.model, k.prompts, k.responses);
        expect(rows.shape).toEqual(tape.scored.shape);
        const [got, want] = await be.readMany([rows, tape.scored]);
        expect(Array.from(got)).toEqual(Array.from(want));
        be.dispose(rows);
        disposeTape(k.model, tape);
      } finally {
        dispose(k);
      }
    }
  });
});
