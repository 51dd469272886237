// Seeded, deterministic shuffling of the batch into equal minibatches: the order comes from
// (run seed, iteration, epoch), so two backends given the same config draw the same order.
import { Rng } from '../util/rng.ts';
import { minibatchOrderSeed } from '../util/seedStreams.ts';

/**
 * The minibatches of one epoch: a permutation of [0, batch) cut into `miniBatches` equal parts.
 * Same (seed, iter, epoch) → same order.
 */
export function epochMinibatches(batch: number, miniBatches: number, seed: number, iter: number, epoch: number): Int32Array[] {
  if (!Number.isInteger(miniBatches) || miniBatches < 1 || batch % miniBatches !== 0) {
    throw new Error(`cannot split a batch of ${batch} sequences into ${miniBatches} equal minibatches`);
  }
  const order = new Rng(minibatchOrderSeed(seed, iter, epoch)).shuffle(Array.from({ length: batch }, (_, i) => i));
  const size = batch / miniBatches;
  return Array.from({ length: miniBatches }, (_, m) => Int32Array.from(order.slice(m * size, (m + 1) * size)));
}
