// float64 reference of RMSNorm over the last dim and its backward (oracle for the RMSNorm kernel).
// As transformers' LlamaRMSNorm / Qwen2RMSNorm / Qwen3RMSNorm (computed in f32 there):
//   r = 1/√(mean_d(x²) + eps),  y = w ⊙ (x·r)
// Qwen3's q_norm / k_norm are the same op over head_dim on every head: rows = tokens × heads, D = head_dim.
// Backward, with g = dL/dy:
//   dx = r·(g⊙w) − x·r³·mean_d(g⊙w⊙x),   dw = Σ_rows g ⊙ x·r

export interface RmsNormOut {
  y: Float64Array; // (M, D)
  rstd: Float64Array; // (M)
}

export function rmsNormRef(x: ArrayLike<number>, w: ArrayLike<number>, M: number, D: number, eps: number): RmsNormOut {
  const y = new Float64Array(M * D);
  const rstd = new Float64Array(M);
  for (let m = 0; m < M; m++) {
    let ss = 0;
    for (let d = 0; d < D; d++) ss += x[m * D + d] * x[m * D + d];
    const r = 1 / Math.sqrt(ss / D + eps);
    rstd[m] = r;
    for (let d = 0; d < D; d++) y[m * D + d] = w[d] * (x[m * D + d] * r);
  }
  return { y, rstd };
}

export interface RmsNormGrads {
  gradX: Float64Array; // (M, D)
  gradW: Float64Array; // (D)
}

export function rmsNormBackwardRef(gradY: ArrayLike<number>, x: ArrayLike<number>, w: ArrayLike<number>, rstd: ArrayLike<number>, M: number, D: number): RmsNormGrads {
  const gradX = new Float64Array(M * D);
  const gradW = new Float64Array(D);
  for (let m = 0; m < M; m++) {
    const r = rstd[m];
    let dot = 0; // Σ_d g·w·x
    for (let d = 0; d < D; d++) {
      const i = m * D + d;
      dot += gradY[i] * w[d] * x[i];
      gradW[d] += gradY[i] * x[i] * r;
    }
    const c = (r * r * r * dot) / D;
    for (let d = 0; d < D; d++) {
      const i = m * D + d;
      gradX[i] = r * gradY[i] * w[d] - c * x[i];
    }
  }
  return { gradX, gradW };
}
