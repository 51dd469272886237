// Every random stream of a run, derived from (run seed, iteration, …): the iteration counter is
// the whole RNG state, so a saved trainer resumes bit-exactly and two backends draw alike. Each
// stream has its own tag (ASCII of a short name) so no two streams share a seed.
import { Rng } from './rng.ts';

/** A 32-bit seed mixed from several integers (order matters), via the host Rng's mixer. */
export function deriveSeed(...parts: number[]): number {
  let h = 0x2545f491;
  for (const p of parts) h = new Rng((h ^ Math.imul(p >>> 0, 0x9e3779b1)) >>> 0).nextU32();
  return h >>> 0;
}

const PROMPTS = 0x7072; // "pr"
const ROLLOUT = 0x726f6c6c; // "roll"
const CRITIC_HEAD = 0x63726974; // "crit"
const EVAL = 0x6576616c; // "eval"
const MINIBATCH = 0x6d62; // "mb"

/**
 * Iteration `iter`'s prompt draw; `round` > 0 are DAPO's extra rounds, each its own stream
 * (round 0 is the plain stream, so dynamic sampling's first round draws what a plain run draws).
 */
export function promptSeed(seed: number, iter: number, round = 0): number {
  return round === 0 ? deriveSeed(seed, iter, PROMPTS) : deriveSeed(seed, iter, PROMPTS, round);
}

/** The sampler's Philox key for iteration `iter`'s rollout (DAPO round `round`). */
export function rolloutSeed(seed: number, iter: number, round = 0): number {
  return round === 0 ? deriveSeed(seed, iter, ROLLOUT) : deriveSeed(seed, iter, ROLLOUT, round);
}

/** The critic's value-head initialisation. */
export function criticHeadSeed(seed: number): number {
  return deriveSeed(seed, CRITIC_HEAD);
}

/** The held-out evaluation's sampling: fixed per run, so evaluations share their noise. */
export function evalSeed(seed: number): number {
  return deriveSeed(seed, EVAL);
}

/** The minibatch order of one PPO epoch. */
export function minibatchOrderSeed(seed: number, iter: number, epoch: number): number {
  return deriveSeed(seed, iter, epoch, MINIBATCH);
}
