// float64 reference of the dense layer y = a·op(b) + bias and its backward (oracle for shaders/matmul.wgsl).
// a (M,K); b (K,N), or (N,K) when transB (the tied LM head: logits = x·wteᵀ); bias (N) or null.

export function matmulRef(
  a: ArrayLike<number>, // (M,K)
  b: ArrayLike<number>, // (K,N) or (N,K)
  bias: ArrayLike<number> | null, // (N)
  M: number,
  K: number,
  N: number,
  transB: boolean,
): Float64Array {
  const y = new Float64Array(M * N); // (M,N)
  if (transB) {
    // b (N,K): dot products of rows, two rows of a against four of b a pass (8 sums from 6 reads
    // per k; 1.2–1.8× the one-row loop at the Hugging Face models' shapes)
    const dot = (aRow: number, bRow: number, n: number) => {
      let s = bias ? bias[n] : 0;
      for (let k = 0; k < K; k++) s += a[aRow + k] * b[bRow + k];
      return s;
    };
    let m = 0;
    for (; m + 2 <= M; m += 2) {
      const a0 = m * K;
      const a1 = a0 + K;
      let n = 0;
      for (; n + 4 <= N; n += 4) {
        let s00 = bias ? bias[n] : 0;
        let s01 = bias ? bias[n + 1] : 0;
        let s02 = bias ? bias[n + 2] : 0;
        let s03 = bias ? bias[n + 3] : 0;
        let s10 = s00;
        let s11 = s01;
        let s12 = s02;
        let s13 = s03;
        const b0 = n * K;
        const b1 = b0 + K;
        const b2 = b1 + K;
        const b3 = b2 + K;
        for (let k = 0; k < K; k++) {
          const x0 = a[a0 + k];
          const x1 = a[a1 + k];
          const w0 = b[b0 + k];
          const w1 = b[b1 + k];
          const w2 = b[b2 + k];
          const w3 = b[b3 + k];
          s00 += x0 * w0;
          s01 += x0 * w1;
          s02 += x0 * w2;
          s03 += x0 * w3;
          s10 += x1 * w0;
          s11 += x1 * w1;
          s12 += x1 * w2;
          s13 += x1 * w3;
        }
        const y0 = m * N + n;
        const y1 = y0 + N;
        y[y0] = s00;
        y[y0 + 1] = s01;
        y[y0 + 2] = s02;
        y[y0 + 3] = s03;
        y[y1] = s10;
        y[y1 + 1] = s11;
        y[y1 + 2] = s12;
        y[y1 + 3] = s13;
      }
      for (; n < N; n++) {
        y[m * N + n] = dot(a0, n * K, n);
        y[(m + 1) * N + n] = dot(a1, n * K, n);
      }
    }
    for (; m < M; m++) for (let n = 0; n < N; n++) y[m * N + n] = dot(m * K, n * K, n);
    return y;
  }
  // b (K,N) is read row by row, and each row serves four rows of a at once (the plain loop's
  // column walk was 3× slower in the CPU backend); every y[m][n] still adds its K products in the
  // order k = 0, 1, …, so the bits are the plain loop's (tests/unit/reference_loop_order.test.ts).
  if (bias) for (let m = 0; m < M; m++) y.set(bias, m * N);
  let m = 0;
  for (; m + 4 <= M; m += 4) {
    const y0 = m * N;
    const y1 = y0 + N;
    const y2 = y1 + N;
    const y3 = y2 + N;
    for (let k = 0; k < K; k++) {
      const a0 = a[m * K + k];
      const a1 = a[(m + 1) * K + k];
      const a2 = a[(m + 2) * K + k];
      const a3 = a[(m + 3) * K + k];
      const bRow = k * N;
      for (let n = 0; n < N; n++) {
        const bkn = b[bRow + n];
        y[y0 + n] += a0 * bkn;
        y[y1 + n] += a1 * bkn;
        y[y2 + n] += a2 * bkn;
        y[y3 + n] += a3 * bkn;
      }
    }
  }
  for (; m < M; m++)
    for (let k = 0; k < K; k++) {
      const amk = a[m * K + k];
      for (let n = 0; n < N; n++) y[m * N + n] += amk * b[k * N + n];
    }
  return y;
}

export interface MatmulGrads {
  gradA: Float64Array; // (M,K)
  gradB: Float64Array; // shape of b
  gradBias: Float64Array; // (N)
}

/** Gradients of Σ gradOut ⊙ y (not accumulated: callers add them to their buffers). */
export function matmulBackwardRef(
  gradOut: ArrayLike<number>, // (M,N)
  a: ArrayLike<number>, // (M,K)
  b: ArrayLike<number>, // (K,N) or (N,K)
  M: number,
  K: number,
  N: number,
  transB: boolean,
): MatmulGrads {
  const gradA = new Float64Array(M * K);
  const gradB = new Float64Array(K * N);
  const gradBias = new Float64Array(N);
  for (let m = 0; m < M; m++) {
    const gRow = m * N;
    for (let n = 0; n < N; n++) gradBias[n] += gradOut[gRow + n];
    if (transB) {
      for (let n = 0; n < N; n++) {
        const g = gradOut[gRow + n];
        for (let k = 0; k < K; k++) {
          gradA[m * K + k] += g * b[n * K + k];
          gradB[n * K + k] += g * a[m * K + k];
        }
      }
      continue;
    }
    // b (K,N) row by row, as in matmulRef; every sum still adds its terms in the order of the
    // loop above (gradA over n, gradB over m), so the bits are the same.
    for (let k = 0; k < K; k++) {
      const bRow = k * N;
      let s = 0;
      for (let n = 0; n < N; n++) s += gradOut[gRow + n] * b[bRow + n];
      gradA[m * K + k] = s;
      const amk = a[m * K + k];
      for (let n = 0; n < N; n++) gradB[bRow + n] += gradOut[gRow + n] * amk;
    }
  }
  return { gradA, gradB, gradBias };
}
