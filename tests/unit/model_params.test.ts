import { describe, expect, it } from 'vitest';
import { gptConfigProblems, type GptConfig } from '../../src/model/config.ts';
import { decayMask, initParams, PARAM_ALIGN, paramLayout } from '../../src/model/params.ts';
import { lrAt } from '../../src/model/schedule.ts';
import { trunkSize } from '../../src/model/gpt.ts';
import { Rng } from '../../src/util/rng.ts';

const cfg: GptConfig = { vocabSize: 19, nLayer: 2, nHead: 2, dModel: 32, maxSeq: 16, head: 'lm' };

describe('parameter layout', () => {
  it('aligns every tensor to 64 elements without overlap, GPT-2 names and shapes', () => {
    const lay = paramLayout(cfg);
    let end = 0;
    for (const e of lay.entries) {
      expect(e.offset % PARAM_ALIGN, e.name).toBe(0);
      expect(e.offset, e.name).toBeGreaterThanOrEqual(end);
      expect(e.size).toBe(e.shape.reduce((a, b) => a * b, 1));
      end = e.offset + e.size;
    }
    expect(lay.total).toBeGreaterThanOrEqual(end);
    expect(lay.total % PARAM_ALIGN).toBe(0);
    expect(lay.byName.get('wte.weight')!.shape).toEqual([19, 32]);
    expect(lay.byName.get('wpe.weight')!.shape).toEqual([16, 32]);
    expect(lay.byName.get('h.1.attn.c_attn.weight')!.shape).toEqual([32, 96]);
    expect(lay.byName.get('h.1.mlp.c_proj.weight')!.shape).toEqual([128, 32]);
    expect(lay.byName.get('ln_f.bias')!.shape).toEqual([32]);
    expect(lay.entries.length).toBe(2 + 12 * 2 + 2);
  });

  it('puts the scalar heads after a trunk that is identical across heads', () => {
    const lm = paramLayout(cfg);
    for (const head of ['value', 'reward'] as const) {
      const lay = paramLayout({ ...cfg, head });
      expect(trunkSize(lay)).toBe(lm.total);
      for (const e of lm.entries) expect(lay.byName.get(e.name)!.offset).toBe(e.offset);
      const prefix = head === 'value' ? 'value_head' : 'reward_head';
      expect(lay.byName.get(`${prefix}.weight`)!.shape).toEqual([1, 32]);
      expect(lay.byName.get(`${prefix}.bias`)!.shape).toEqual([1]);
    }
  });

  it('initialises GPT-2 style: N(0, 0.02) weights, scaled residual projections, unit LN gains, zero biases and value head', () => {
    const lay = paramLayout({ ...cfg, head: 'value' });
    const p = initParams(lay, new Rng(5));
    const std = (name: string) => {
      const e = lay.byName.get(name)!;
      let s = 0;
      for (let i = 0; i < e.size; i++) s += p[e.offset + i] ** 2;
      return Math.sqrt(s / e.size);
    };
    expect(std('h.0.mlp.c_fc.weight')).toBeGreaterThan(0.018);
    expect(std('h.0.mlp.c_fc.weight')).toBeLessThan(0.022);
    expect(std('h.0.mlp.c_proj.weight')).toBeLessThan(0.012); // 0.02/√4 = 0.01
    expect(std('h.0.mlp.c_proj.weight')).toBeGreaterThan(0.008);
    const ln = lay.byName.get('h.1.ln_2.weight')!;
    expect(Array.from(p.subarray(ln.offset, ln.offset + ln.size)).every((x) => x === 1)).toBe(true);
    for (const name of ['value_head.weight', 'value_head.bias', 'h.0.attn.c_attn.bias']) expect(std(name)).toBe(0);
    // same seed, same parameters
    expect(initParams(lay, new Rng(5))).toEqual(p);
    expect(initParams(lay, new Rng(6))).not.toEqual(p);
  });

  it('decays matmul weights only', () => {
    const lay = paramLayout({ ...cfg, head: 'reward' });
    const m = decayMask(lay);
    for (const e of lay.entries) {
      const want = /(c_attn|c_proj|c_fc)\.weight$|head\.weight$/.test(e.name) ? 1 : 0;
      for (let i = 0; i < e.size; i++) expect(m[e.offset + i], e.name).toBe(want);
    }
    let padding = 0;
    for (let i = 0; i < m.length; i++) padding += m[i];
    expect(padding).toBe(lay.entries.filter((e) => e.decay).reduce((a, e) => a + e.size, 0));
  });

  it('reports every config problem', () => {
    expect(gptConfigProblems(cfg)).toEqual([]);
    const bad = gptConfigProblems({ vocabSize: 19, nLayer: 7, nHead: 3, dModel: 16, maxSeq: 200, head: 'lm' });
    expect(bad.map((l) => l.split(' ')[0])).toEqual(['nLayer', 'dModel', 'maxSeq', 'dModel']);
    expect(gptConfigProblems({ ...cfg, nHead: 3, dModel: 64 }).join()).toMatch(/not divisible/);
  });
});

describe('learning-rate schedule', () => {
  const s = { peak: 1e-3, warmupSteps: 10, totalSteps: 110, minRatio: 0.1 };
  it('warms up linearly then decays by a cosine to minRatio·peak', () => {
    expect(lrAt(0, s)).toBeCloseTo(1e-4, 12);
    expect(lrAt(9, s)).toBeCloseTo(1e-3, 12);
    expect(lrAt(10, s)).toBeCloseTo(1e-3, 12);
    expect(lrAt(60, s)).toBeCloseTo(1e-3 * (0.1 + 0.9 * 0.5), 12);
    expect(lrAt(110, s)).toBeCloseTo(1e-4, 12);
    expect(lrAt(500, s)).toBeCloseTo(1e-4, 12);
    for (let t = 11; t < 110; t++) expect(lrAt(t, s)).toBeLessThan(lrAt(t - 1, s));
  });
});
