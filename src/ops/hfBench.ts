// Inputs of the Hugging Face layer ops' rows in `npm run bench -- --only kernels`: a reduced
// transformer shape with one row per (B, A) position of the benchmark batch, made once per backend
// and batch shape by benchInputs (so a bench row times the op, not the upload).
import type { Backend } from '../backend/backend.ts';
import type { Tensor } from '../backend/tensor.ts';
import { ropeInvFreq } from '../reference/nn/rope.ts';
import type { Rng } from '../util/rng.ts';
import type { BenchBatch } from './benchBatch.ts';
import { benchInputs } from './benchInputs.ts';
import { ropeFrequencyWords } from './ropeFrequencies.ts';

/** The reduced shape: a quarter of SmolLM2-135M's widths (576, 1536, 9 heads of 64). */
export const HF_BENCH = { D: 144, F: 384, H: 3, Dh: 48, V: 4096 } as const;

export interface HfBenchInputs {
  M: number; // rows = B·A
  x: Tensor; // (M, D) f32
  gradX: Tensor; // (M, D) f32, a gradient of x's shape
  normWeight: Tensor; // (D) f32
  rstd: Tensor; // (M) f32
  q: Tensor; // (M, H·Dh) f32
  positions: Tensor; // (M) i32
  frequencies: Tensor; // (Dh/2, 2) i32, θ = 10 000
  gateUp: Tensor; // (M, 2F) f32
  gate: Tensor; // (M, F) f32
  up: Tensor; // (M, F) f32
  gradF: Tensor; // (M, F) f32
  tokens: Tensor; // (M) i32
  table: Tensor; // (V, D) f32
  tableF16: Tensor; // (V, D) f16
  wUp16: Tensor; // (F, D) f16, an nn.Linear weight
  wUp32: Tensor; // (F, D) f32
  wGateUp16: Tensor; // (2F, D) f16
  wDown16: Tensor; // (D, F) f16
}

export function hfBenchInputs(be: Backend, batch: BenchBatch): HfBenchInputs {
  const [B, A] = batch.mask.shape;
  return benchInputs(be, `hf-${B}x${A}`, (be, r) => makeInputs(be, r, B, A));
}

function makeInputs(be: Backend, r: Rng, B: number, A: number): HfBenchInputs {
  const M = B * A;
  const { D, F, H, Dh, V } = HF_BENCH;
  const randn = (n: number, scale = 1) => Float64Array.from({ length: n }, () => r.normal() * scale);
  return {
    M,
    x: be.tensor(randn(M * D), [M, D]),
    gradX: be.tensor(randn(M * D), [M, D]),
    normWeight: be.tensor(
      randn(D, 0.1).map((v) => 1 + v),
      [D],
    ),
    rstd: be.tensor(
      Float64Array.from({ length: M }, () => 0.5 + r.next()),
      [M],
    ),
    q: be.tensor(randn(M * H * Dh), [M, H * Dh]),
    positions: be.tensor(
      Float64Array.from({ length: M }, (_, i) => i % A),
      [M],
      'i32',
    ),
    frequencies: be.tensor(ropeFrequencyWords(ropeInvFreq(Dh, 10000)), [Dh / 2, 2], 'i32'),
    gateUp: be.tensor(randn(M * 2 * F, 2), [M, 2 * F]),
    gate: be.tensor(randn(M * F, 2), [M, F]),
    up: be.tensor(randn(M * F), [M, F]),
    gradF: be.tensor(randn(M * F), [M, F]),
    tokens: be.tensor(
      Float64Array.from({ length: M }, () => r.int(0, V)),
      [M],
      'i32',
    ),
    table: be.tensor(randn(V * D, 0.02), [V, D]),
    tableF16: be.tensor(randn(V * D, 0.02), [V, D], 'f16'),
    wUp16: be.tensor(randn(F * D, 0.05), [F, D], 'f16'),
    wUp32: be.tensor(randn(F * D, 0.05), [F, D]),
    wGateUp16: be.tensor(randn(2 * F * D, 0.05), [2 * F, D], 'f16'),
    wDown16: be.tensor(randn(D * F, 0.05), [D, F], 'f16'),
  };
}
