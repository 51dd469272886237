// Inputs of the bench cases whose ops do not take the PPO batch (the Hugging Face model ops):
// made once per backend and shape, at a fixed seed, on the first (warm-up) call of `npm run bench
// -- --only kernels`, so the timed calls measure the op alone.
import type { Backend } from '../backend/backend.ts';
import type { DType, Tensor } from '../backend/tensor.ts';
import { Rng } from '../util/rng.ts';

const made = new WeakMap<Backend, Map<string, unknown>>();

/** `make(be)`'s result for this backend and key, made on first use and kept (bench inputs live as long as the run). */
export function benchInputs<T>(be: Backend, key: string, make: (be: Backend, r: Rng) => T): T {
  let byKey = made.get(be);
  if (!byKey) {
    byKey = new Map();
    made.set(be, byKey);
  }
  if (!byKey.has(key)) byKey.set(key, make(be, new Rng(7)));
  return byKey.get(key) as T;
}

/** A tensor of normal values times `scale` (f32), or of integers in [0, scale) (i32). */
export function randomTensor(be: Backend, r: Rng, shape: readonly number[], scale = 1, dtype: DType = 'f32'): Tensor {
  const n = shape.reduce((a, b) => a * b, 1);
  const data = Float64Array.from({ length: n }, () => (dtype === 'i32' ? r.int(0, scale) : r.normal() * scale));
  return be.tensor(data, shape, dtype);
}
