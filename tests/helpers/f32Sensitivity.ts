// How far a float64 reference moves when every weight it reads is nudged by float32's rounding
// (×(1 ± u·2⁻²⁴), u uniform in [0, 1)): the part of a float32 kernel's error that comes from the
// problem's conditioning rather than from the kernel. Tests add a multiple of it to their atol so an
// ill-conditioned draw (a peaked softmax, large logits) is judged by what float32 can reach there.
import { rng } from './random.ts';

/** A deep copy of `weights` with every Float64Array entry nudged by float32's relative rounding. */
export function nudgeWeights<T>(weights: T, seed: number): T {
  const u = rng(seed);
  const walk = (v: unknown): unknown => {
    if (v instanceof Float64Array) return Float64Array.from(v, (x) => x * (1 + (2 * u.next() - 1) * 2 ** -24));
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object' && !ArrayBuffer.isView(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    return v;
  };
  return walk(weights) as T;
}

/** Per element, the largest |f(nudged) − f(weights)| over `draws` nudges. */
export function weightSensitivity<T>(weights: T, f: (w: T) => number[], draws = 3, seed = 9100): Float64Array {
  const base = f(weights);
  const sens = new Float64Array(base.length);
  for (let d = 0; d < draws; d++) {
    const moved = f(nudgeWeights(weights, seed + d));
    for (let i = 0; i < base.length; i++) sens[i] = Math.max(sens[i], Math.abs(moved[i] - base[i]));
  }
  return sens;
}
