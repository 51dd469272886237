// Seeded, deterministic shuffling of the batch into equal minibatches, and the seeds derived from
// (run seed, iteration, epoch) so that two backends given the same config draw the same order.
import { Rng } from '../util/rng.ts';

/** A 32-bit seed mixed from several integers (order matters), via the host Rng's mixer. */
export function deriveSeed(...parts: number[]): number {
  let h = 0x2545f491;
  for (const p of parts) h = new Rng((h ^ Math.imul(p >>> 0, 0x9e3779b1)) >>> 0).nextU32();
  return h >>> 0;
}

/**
 * The minibatches of one epoch: a permutation of [0, batch) cut into `miniBatches` equal parts.
 * Same (seed, iter, epoch) → same order.
 */
export function epochMinibatches(batch: number, miniBatches: number, seed: number, iter: number, epoch: number): Int32Array[] {
  if (!Number.isInteger(miniBatches) || miniBatches < 1 || batch % miniBatches !== 0) {
    throw new Error(`cannot split a batch of ${batch} sequences into ${miniBatches} equal minibatches`);
  }
  const order = new Rng(deriveSeed(seed, iter, epoch, 0x6d62)).shuffle(Array.from({ length: batch }, (_, i) => i));
  const size = batch / miniBatches;
  return Array.from({ length: miniBatches }, (_, m) => Int32Array.from(order.slice(m * size, (m + 1) * size)));
}
