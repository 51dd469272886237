// float64 reference of token + position embedding (oracle for shaders/embedding.wgsl).
// Token ids and positions are clamped into their tables, so a stray id reads a real row instead
// of out-of-bounds memory (on the GPU) and the backward sends its gradient to the same row.

export const clampIndex = (i: number, n: number) => Math.min(n - 1, Math.max(0, Math.trunc(i)));

export function embeddingRef(
  tokens: ArrayLike<number>, // (R) i32
  positions: ArrayLike<number>, // (R) i32
  wte: ArrayLike<number>, // (V,D)
  wpe: ArrayLike<number>, // (P,D)
  V: number,
  P: number,
  D: number,
): Float64Array {
  const R = tokens.length;
  const out = new Float64Array(R * D); // (R,D)
  for (let r = 0; r < R; r++) {
    const v = clampIndex(tokens[r], V);
    const p = clampIndex(positions[r], P);
    for (let d = 0; d < D; d++) out[r * D + d] = wte[v * D + d] + wpe[p * D + d];
  }
  return out;
}

/** Scatter-add of gradOut rows into (fresh) gradWte (V,D) and gradWpe (P,D). */
export function embeddingBackwardRef(
  gradOut: ArrayLike<number>, // (R,D)
  tokens: ArrayLike<number>,
  positions: ArrayLike<number>,
  V: number,
  P: number,
  D: number,
): { gradWte: Float64Array; gradWpe: Float64Array } {
  const gradWte = new Float64Array(V * D);
  const gradWpe = new Float64Array(P * D);
  for (let r = 0; r < tokens.length; r++) {
    const v = clampIndex(tokens[r], V);
    const p = clampIndex(positions[r], P);
    for (let d = 0; d < D; d++) {
      gradWte[v * D + d] += gradOut[r * D + d];
      gradWpe[p * D + d] += gradOut[r * D + d];
    }
  }
  return { gradWte, gradWpe };
}
