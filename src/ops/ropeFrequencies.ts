// The frequencies the rope op takes, made once per model on the host: each inv_freq (from the
// reference's ropeInvFreq, with θ and llama3 scaling) as a 64-bit fixed-point fraction of a turn
// per position, the form in which shaders/rope.wgsl forms angles exactly.
import type { Backend } from '../backend/backend.ts';
import type { Tensor } from '../backend/tensor.ts';

const TWO_64 = 2n ** 64n;

/**
 * inv_freq (Dh/2) as the kernel's fixed-point turns per position: C = round(frac(inv/(2π))·2^64)
 * in two words (high, low) per frequency. A position is an integer, so the whole turns of inv/(2π)
 * never change an angle and only the fraction is kept, to 2^-64 turn (float64's 53 bits of it).
 */
export function ropeFrequencyWords(invFreq: ArrayLike<number>): Int32Array {
  const words = new Int32Array(2 * invFreq.length);
  for (let j = 0; j < invFreq.length; j++) {
    const inv = invFreq[j];
    if (!Number.isFinite(inv) || inv < 0) throw new Error(`rope invFreq[${j}]: expected a finite number ≥ 0, got ${inv}`);
    const turns = inv / (2 * Math.PI);
    const c = BigInt(Math.round((turns - Math.floor(turns)) * 2 ** 64)) % TWO_64;
    words[2 * j] = Number(c >> 32n) | 0;
    words[2 * j + 1] = Number(c & 0xffffffffn) | 0;
  }
  return words;
}

/** The inv_freq values frequency words stand for (what the float64 body rotates by). */
export function invFreqOfWords(words: ArrayLike<number>): Float64Array {
  const half = words.length / 2;
  const inv = new Float64Array(half);
  for (let j = 0; j < half; j++) inv[j] = (((words[2 * j] >>> 0) * 2 ** 32 + (words[2 * j + 1] >>> 0)) / 2 ** 64) * 2 * Math.PI;
  return inv;
}

/** The frequencies tensor rope takes: (Dh/2, 2) i32, made once per model. */
export function ropeFrequencies(be: Backend, invFreq: ArrayLike<number>): Tensor {
  return be.tensor(ropeFrequencyWords(invFreq), [invFreq.length, 2], 'i32');
}
