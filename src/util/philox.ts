// Philox-4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011):
// a counter-based generator, so the draw for (seed, row, position) is a pure function and the
// sampling kernel (shaders/sample.wgsl, same algorithm, same constants) and the CPU reference
// draw the very same uniform. Checked against Random123's known-answer vectors in the tests.

const M0 = 0xd2511f53;
const M1 = 0xcd9e8d57;
const W0 = 0x9e3779b9;
const W1 = 0xbb67ae85;

/** High 32 bits of the 64-bit product a·b; built from 16-bit halves exactly as the WGSL does. */
export function mulhi32(a: number, b: number): number {
  const aLo = a & 0xffff,
    aHi = a >>> 16;
  const bLo = b & 0xffff,
    bHi = b >>> 16;
  const ll = aLo * bLo,
    lh = aLo * bHi,
    hl = aHi * bLo,
    hh = aHi * bHi;
  const mid = (ll >>> 16) + (lh & 0xffff) + (hl & 0xffff);
  return (hh + (lh >>> 16) + (hl >>> 16) + Math.floor(mid / 65536)) >>> 0;
}

/** Philox-4x32 with 10 rounds: counter (4 × u32), key (2 × u32) → 4 × u32. */
export function philox4x32(counter: readonly number[], key: readonly number[]): [number, number, number, number] {
  let c0 = counter[0] >>> 0,
    c1 = counter[1] >>> 0,
    c2 = counter[2] >>> 0,
    c3 = counter[3] >>> 0;
  let k0 = key[0] >>> 0,
    k1 = key[1] >>> 0;
  for (let round = 0; round < 10; round++) {
    const hi0 = mulhi32(M0, c0),
      lo0 = Math.imul(M0, c0) >>> 0;
    const hi1 = mulhi32(M1, c2),
      lo1 = Math.imul(M1, c2) >>> 0;
    c0 = (hi1 ^ c1 ^ k0) >>> 0;
    c1 = lo1;
    c2 = (hi0 ^ c3 ^ k1) >>> 0;
    c3 = lo0;
    k0 = (k0 + W0) >>> 0;
    k1 = (k1 + W1) >>> 0;
  }
  return [c0, c1, c2, c3];
}

/**
 * The sampler's uniform in [0, 1) for (seed, row, position): counter (row, position, 0, 0),
 * key (seed, 0); the top 24 bits of the first word, so the value is exact in float32 too.
 */
export function sampleUniform(seed: number, row: number, position: number): number {
  const x = philox4x32([row, position, 0, 0], [seed, 0])[0];
  return (x >>> 8) / 16777216;
}
