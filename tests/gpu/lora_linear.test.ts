// loraLinear / loraLinearBackward (src/model/hf/lora.ts: the frozen weight through linear, f16 or
// f32, the adapters through matmul) on WebGPU and the float64 CPU backend against
// src/reference/nn/lora.ts, on fresh random inputs (TEST_SEED): ranks 1–16, one row, shapes off
// the 64×64 tiles, gradients accumulated into buffers that already hold values. With PEFT's
// init (B = 0) the output equals the base layer's bit for bit, on each backend.
// Tolerance: f32 sums of up to K + r products, normwise as the other float32 layers here:
// |Δ| ≤ 1e-5·max(1, max|ref|) + 1e-4·|ref| per compared vector (an f16 weight is compared
// against the reference on its f16 values).
import { describe, expect, it } from 'vitest';
import { f16Round } from '../../src/backend/f16.ts';
import type { DType } from '../../src/backend/tensor.ts';
import { linear } from '../../src/ops/linear.ts';
import { loraInitValues, loraLinear, loraLinearBackward } from '../../src/model/hf/lora.ts';
import { loraLinearBackwardRef, loraLinearRef } from '../../src/reference/nn/lora.ts';
import { BACKENDS } from '../helpers/backends.ts';
import { expectClose, randn, rng, TOL } from '../helpers/random.ts';

const f32 = (x: ArrayLike<number>) => Float64Array.from(new Float32Array(x));
const close = (got: Float64Array, want: Float64Array, what: string) => {
  const size = want.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
  expectClose(got, want, TOL.reduce.rtol, TOL.reduce.atol * Math.max(1, size), what);
};

const SHAPES: { M: number; K: number; N: number; r: number }[] = [
  { M: 1, K: 8, N: 5, r: 1 },
  { M: 7, K: 33, N: 70, r: 4 },
  { M: 65, K: 96, N: 40, r: 16 },
];

describe.each(BACKENDS)('LoRA linear on %s', (_name, makeBackend) => {
  for (const dtype of ['f16', 'f32'] as DType[]) {
    for (const s of SHAPES) {
      it(`${dtype} base weight, M=${s.M} K=${s.K} N=${s.N} r=${s.r}: y, gradX, gradA, gradB match the reference`, async () => {
        const be = await makeBackend();
        const { M, K, N, r } = s;
        const R = rng(M * 1009 + K * 31 + N + r + (dtype === 'f16' ? 5 : 0));
        const scaling = 2;
        const xs = f32(randn(R, M * K));
        const w32 = f32(randn(R, N * K, 0.1));
        const w = dtype === 'f16' ? w32.map(f16Round) : w32;
        const bias = f32(randn(R, N));
        const a = f32(randn(R, r * K, 0.2));
        const b = f32(randn(R, N * r, 0.2)); // a trained adapter: B ≠ 0
        const gy = f32(randn(R, M * N));
        const gradA0 = f32(randn(R, r * K));
        const gradB0 = f32(randn(R, N * r));
        const x = be.tensor(xs, [M, K]);
        const weight = be.tensor(w32, [N, K], dtype);
        const adapter = { a: be.tensor(a, [r, K]), b: be.tensor(b, [N, r]), scaling };
        const { y, scaledDown } = loraLinear(be, { x, weight, bias: be.tensor(bias, [N]), adapter });
        expect(y.shape).toEqual([M, N]);
        expect(scaledDown.shape).toEqual([M, r]);
        const gradA = be.tensor(gradA0, [r, K]);
        const gradB = be.tensor(gradB0, [N, r]);
        const gradX = loraLinearBackward(be, { gradY: be.tensor(gy, [M, N]), x, weight, adapter, scaledDown, gradA, gradB });
        expect(gradX.shape).toEqual([M, K]);
        const [ry, rgx, rga, rgb] = await be.readMany([y, gradX, gradA, gradB]);
        const shapes = { M, K, N, r, scaling };
        const want = loraLinearRef(xs, w, bias, a, b, shapes);
        const grads = loraLinearBackwardRef(gy, xs, w, a, b, shapes);
        close(ry, want.y, 'y');
        close(rgx, grads.gradX, 'gradX');
        close(
          rga,
          grads.gradA.map((v, i) => v + gradA0[i]),
          'gradA (accumulated)',
        );
        close(
          rgb,
          grads.gradB.map((v, i) => v + gradB0[i]),
          'gradB (accumulated)',
        );
      });
    }
  }

  it("PEFT's init (B = 0): the output is the base layer's bit for bit; A's gradient is 0", async () => {
    const be = await makeBackend();
    const R = rng(3);
    const [M, K, N, r] = [9, 40, 24, 8];
    const xs = f32(randn(R, M * K));
    const x = be.tensor(xs, [M, K]);
    const weight = be.tensor(f32(randn(R, N * K, 0.1)), [N, K], 'f16');
    const bias = be.tensor(f32(randn(R, N)), [N]);
    const init = loraInitValues(r, K, N, 17);
    const adapter = { a: be.tensor(init.a, [r, K]), b: be.tensor(init.b, [N, r]), scaling: 2 };
    const { y, scaledDown } = loraLinear(be, { x, weight, bias, adapter });
    const base = linear(be, { x, weight, bias });
    const gradA = be.zeros([r, K]);
    const gradB = be.zeros([N, r]);
    loraLinearBackward(be, { gradY: be.tensor(f32(randn(R, M * N)), [M, N]), x, weight, adapter, scaledDown, gradA, gradB });
    const [ry, rbase, rga, rgb] = await be.readMany([y, base, gradA, gradB]);
    expect(Array.from(ry)).toEqual(Array.from(rbase));
    expect(rga.every((v) => v === 0)).toBe(true);
    expect(rgb.some((v) => v !== 0)).toBe(true);
  });
});
