// float64 reference of the dense layer y = a·op(b) + bias and its backward (oracle for shaders/matmul.wgsl).
// a (M,K); b (K,N), or (N,K) when transB (the tied LM head: logits = x·wteᵀ); bias (N) or null.

/** b[k][n] of the logical (K,N) operand, whichever way b is stored. */
function bAt(b: ArrayLike<number>, k: number, n: number, K: number, N: number, transB: boolean): number {
  return transB ? b[n * K + k] : b[k * N + n];
}

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
  for (let m = 0; m < M; m++) {
    for (let n = 0; n < N; n++) {
      let s = bias ? bias[n] : 0;
      for (let k = 0; k < K; k++) s += a[m * K + k] * bAt(b, k, n, K, N, transB);
      y[m * N + n] = s;
    }
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
    for (let n = 0; n < N; n++) {
      const g = gradOut[m * N + n];
      gradBias[n] += g;
      for (let k = 0; k < K; k++) {
        gradA[m * K + k] += g * bAt(b, k, n, K, N, transB);
        gradB[transB ? n * K + k : k * N + n] += g * a[m * K + k];
      }
    }
  }
  return { gradA, gradB, gradBias };
}
