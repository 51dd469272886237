// The float64 LoRA reference (src/reference/nn/lora.ts) against central finite differences of
// Σ g ⊙ y, on fresh random inputs (TEST_SEED); B = 0 gives the base layer exactly; PEFT's init,
// scaling, keys and adapter_config.json (src/model/hf/lora.ts).
// Tolerance: central differences with step 1e-5 on a function bilinear in each argument are exact
// up to rounding, so |fd − analytic| ≤ 1e-7·(1 + |analytic|).
import { describe, expect, it } from 'vitest';
import { loraInitValues, loraScaling, peftAdapterConfig, peftAdapterKey } from '../../src/model/hf/lora.ts';
import { matmulRef } from '../../src/reference/nn/matmul.ts';
import { loraLinearBackwardRef, loraLinearRef } from '../../src/reference/nn/lora.ts';
import { randn, rng } from '../helpers/random.ts';

describe('LoRA linear reference', () => {
  it.each([
    { M: 3, K: 5, N: 4, r: 2, scaling: 2 },
    { M: 1, K: 7, N: 3, r: 1, scaling: 0.5 },
    { M: 6, K: 4, N: 9, r: 4, scaling: 16 / Math.sqrt(4) },
  ])('gradients equal central finite differences: %o', (shapes) => {
    const { M, K, N, r } = shapes;
    const R = rng(M * 100 + K * 10 + N + r);
    const x = randn(R, M * K);
    const w = randn(R, N * K);
    const bias = randn(R, N);
    const a = randn(R, r * K);
    const b = randn(R, N * r); // non-zero B: the adapter's own gradient paths all carry weight
    const g = randn(R, M * N);
    const loss = (xx: Float64Array, aa: Float64Array, bb: Float64Array) => loraLinearRef(xx, w, bias, aa, bb, shapes).y.reduce((s, y, i) => s + y * g[i], 0);
    const grads = loraLinearBackwardRef(g, x, w, a, b, shapes);
    const h = 1e-5;
    const check = (which: 'x' | 'a' | 'b', analytic: Float64Array) => {
      for (let i = 0; i < analytic.length; i++) {
        const nudged = (d: number) => {
          const args = { x: Float64Array.from(x), a: Float64Array.from(a), b: Float64Array.from(b) };
          args[which][i] += d;
          return loss(args.x, args.a, args.b);
        };
        const fd = (nudged(h) - nudged(-h)) / (2 * h);
        expect(Math.abs(fd - analytic[i]), `${which}[${i}]: fd ${fd} vs ${analytic[i]}`).toBeLessThanOrEqual(1e-7 * (1 + Math.abs(analytic[i])));
      }
    };
    check('x', grads.gradX);
    check('a', grads.gradA);
    check('b', grads.gradB);
  });

  it('with B = 0 the output is the base layer exactly, and A gets no gradient', () => {
    const R = rng(7);
    const shapes = { M: 4, K: 6, N: 5, r: 3, scaling: 2 };
    const x = randn(R, 24);
    const w = randn(R, 30);
    const bias = randn(R, 5);
    const { a, b } = loraInitValues(3, 6, 5, 11);
    expect(Array.from(loraLinearRef(x, w, bias, a, b, shapes).y)).toEqual(Array.from(matmulRef(x, w, bias, 4, 6, 5, true)));
    const grads = loraLinearBackwardRef(randn(R, 20), x, w, a, b, shapes);
    expect(grads.gradA.every((v) => v === 0)).toBe(true);
    expect(grads.gradB.some((v) => v !== 0)).toBe(true);
  });
});

describe('PEFT conventions', () => {
  it('init: A uniform within ±1/√in (f32 values), B zeros, the same for the same seed', () => {
    const { a, b } = loraInitValues(8, 64, 32, 5);
    expect(a.length).toBe(8 * 64);
    expect(b.length).toBe(32 * 8);
    expect(b.every((v) => v === 0)).toBe(true);
    expect(Math.max(...a.map(Math.abs))).toBeLessThanOrEqual(1 / 8);
    expect(Math.max(...a.map(Math.abs))).toBeGreaterThan(0.9 / 8); // 512 draws reach the edge
    expect(a.every((v) => Math.fround(v) === v)).toBe(true);
    expect(Array.from(loraInitValues(8, 64, 32, 5).a)).toEqual(Array.from(a));
    expect(Array.from(loraInitValues(8, 64, 32, 6).a)).not.toEqual(Array.from(a));
    expect(() => loraInitValues(0, 4, 4, 1)).toThrow(/rank r: 0/);
    expect(() => loraInitValues(1.5, 4, 4, 1)).toThrow(/rank r: 1.5/);
  });

  it('scaling lora_alpha / r, or / √r with rsLoRA; keys and adapter_config.json as PEFT saves them', () => {
    expect(loraScaling({ r: 8, alpha: 16, rslora: false })).toBe(2);
    expect(loraScaling({ r: 16, alpha: 16, rslora: true })).toBe(4);
    expect(peftAdapterKey('model.layers.3.self_attn.q_proj', 'A')).toBe('base_model.model.model.layers.3.self_attn.q_proj.lora_A.weight');
    expect(peftAdapterKey('model.layers.0.mlp.down_proj', 'B')).toBe('base_model.model.model.layers.0.mlp.down_proj.lora_B.weight');
    const cfg = peftAdapterConfig({ r: 8, alpha: 16, rslora: false, targets: ['q_proj', 'v_proj'] }, 'Qwen/Qwen3-0.6B');
    expect(cfg).toMatchObject({ peft_type: 'LORA', task_type: 'CAUSAL_LM', r: 8, lora_alpha: 16, target_modules: ['q_proj', 'v_proj'], lora_dropout: 0, bias: 'none' });
  });
});
