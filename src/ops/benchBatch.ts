// The PPO batch `npm run bench -- --only kernels` runs each op's bench case on: every (B, A)
// tensor a PPO op takes, random at a fixed seed, with right-padded action masks.
import type { Backend } from '../backend/backend.ts';
import type { Tensor } from '../backend/tensor.ts';
import { Rng } from '../util/rng.ts';

export interface BenchSize {
  name: string;
  B: number;
  A: number;
  V: number;
}

export interface BenchBatch {
  logits: Tensor; // (B, A, V) f32
  tokens: Tensor; // (B, A) i32
  logp: Tensor; // (B, A) f32, and every (B, A) below
  old: Tensor;
  ref: Tensor;
  values: Tensor;
  oldValues: Tensor;
  rewards: Tensor;
  adv: Tensor;
  mask: Tensor;
  scores: Tensor; // (B) f32
  group: number[]; // (B) groups of 4
}

export function makeBenchBatch(be: Backend, s: BenchSize, seed: number): BenchBatch {
  const r = new Rng(seed);
  const n = s.B * s.A;
  const arr = (k: number, f: () => number) => Float64Array.from({ length: k }, f);
  const mask = new Float64Array(n);
  for (let b = 0; b < s.B; b++) {
    const len = r.int(1, s.A + 1);
    for (let a = 0; a < len; a++) mask[b * s.A + a] = 1;
  }
  return {
    logits: be.tensor(
      arr(n * s.V, () => r.normal() * 3),
      [s.B, s.A, s.V],
    ),
    tokens: be.tensor(
      arr(n, () => r.int(0, s.V)),
      [s.B, s.A],
      'i32',
    ),
    logp: be.tensor(
      arr(n, () => -Math.abs(r.normal())),
      [s.B, s.A],
    ),
    old: be.tensor(
      arr(n, () => -Math.abs(r.normal())),
      [s.B, s.A],
    ),
    ref: be.tensor(
      arr(n, () => -Math.abs(r.normal())),
      [s.B, s.A],
    ),
    values: be.tensor(
      arr(n, () => r.normal()),
      [s.B, s.A],
    ),
    oldValues: be.tensor(
      arr(n, () => r.normal()),
      [s.B, s.A],
    ),
    rewards: be.tensor(
      arr(n, () => r.normal()),
      [s.B, s.A],
    ),
    adv: be.tensor(
      arr(n, () => r.normal()),
      [s.B, s.A],
    ),
    mask: be.tensor(mask, [s.B, s.A]),
    scores: be.tensor(
      arr(s.B, () => r.normal()),
      [s.B],
    ),
    group: Array.from({ length: s.B }, (_, i) => Math.floor(i / 4)),
  };
}
