// float64 references of the row selections used to pick response positions and build minibatches
// (oracle for shaders/slice.wgsl).

/** x (B,S,D) → rows [start, start+len) of every sequence (B,len,D). */
export function sliceSeqRef(x: ArrayLike<number>, B: number, S: number, D: number, start: number, len: number): Float64Array {
  const out = new Float64Array(B * len * D);
  for (let b = 0; b < B; b++) {
    for (let l = 0; l < len; l++) {
      for (let d = 0; d < D; d++) out[(b * len + l) * D + d] = x[(b * S + start + l) * D + d];
    }
  }
  return out;
}

/** Adjoint of sliceSeqRef: grad (B,len,D) → (B,S,D), zero outside the slice. */
export function sliceSeqBackwardRef(grad: ArrayLike<number>, B: number, S: number, D: number, start: number, len: number): Float64Array {
  const out = new Float64Array(B * S * D);
  for (let b = 0; b < B; b++) {
    for (let l = 0; l < len; l++) {
      for (let d = 0; d < D; d++) out[(b * S + start + l) * D + d] = grad[(b * len + l) * D + d];
    }
  }
  return out;
}

/** out[i,:] = x[index[i],:] with rows of `rowSize` values; an index outside [0, N) gives a zero row. */
export function gatherRowsRef(x: ArrayLike<number>, N: number, rowSize: number, index: ArrayLike<number>): Float64Array {
  const out = new Float64Array(index.length * rowSize);
  for (let i = 0; i < index.length; i++) {
    const src = index[i];
    if (!(src >= 0 && src < N)) continue;
    for (let j = 0; j < rowSize; j++) out[i * rowSize + j] = x[src * rowSize + j];
  }
  return out;
}
