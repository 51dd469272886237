// float64 reference of LayerNorm over the last dim (oracle for shaders/layernorm.wgsl).
// y = (x − mean)·rstd·gamma + beta, rstd = 1/sqrt(var + eps), var biased (divide by D).

export interface LayerNormOut {
  y: Float64Array; // (M,D)
  mean: Float64Array; // (M)
  rstd: Float64Array; // (M)
}

export function layerNormRef(x: ArrayLike<number>, gamma: ArrayLike<number>, beta: ArrayLike<number>, M: number, D: number, eps: number): LayerNormOut {
  const y = new Float64Array(M * D);
  const mean = new Float64Array(M);
  const rstd = new Float64Array(M);
  for (let m = 0; m < M; m++) {
    let s = 0;
    for (let d = 0; d < D; d++) s += x[m * D + d];
    const mu = s / D;
    let v = 0;
    for (let d = 0; d < D; d++) v += (x[m * D + d] - mu) ** 2;
    const r = 1 / Math.sqrt(v / D + eps);
    mean[m] = mu;
    rstd[m] = r;
    for (let d = 0; d < D; d++) y[m * D + d] = (x[m * D + d] - mu) * r * gamma[d] + beta[d];
  }
  return { y, mean, rstd };
}

export interface LayerNormGrads {
  gradX: Float64Array; // (M,D)
  gradGamma: Float64Array; // (D)
  gradBeta: Float64Array; // (D)
}

/**
 * With x̂ = (x − mean)·rstd and g = gradY·gamma:
 *   gradX = rstd·(g − mean_d(g) − x̂·mean_d(g·x̂)), gradGamma = Σ_rows gradY·x̂, gradBeta = Σ_rows gradY.
 */
export function layerNormBackwardRef(
  gradY: ArrayLike<number>,
  x: ArrayLike<number>,
  gamma: ArrayLike<number>,
  mean: ArrayLike<number>,
  rstd: ArrayLike<number>,
  M: number,
  D: number,
): LayerNormGrads {
  const gradX = new Float64Array(M * D);
  const gradGamma = new Float64Array(D);
  const gradBeta = new Float64Array(D);
  for (let m = 0; m < M; m++) {
    let sg = 0;
    let sgx = 0;
    for (let d = 0; d < D; d++) {
      const xh = (x[m * D + d] - mean[m]) * rstd[m];
      const g = gradY[m * D + d] * gamma[d];
      sg += g;
      sgx += g * xh;
      gradGamma[d] += gradY[m * D + d] * xh;
      gradBeta[d] += gradY[m * D + d];
    }
    sg /= D;
    sgx /= D;
    for (let d = 0; d < D; d++) {
      const xh = (x[m * D + d] - mean[m]) * rstd[m];
      gradX[m * D + d] = rstd[m] * (gradY[m * D + d] * gamma[d] - sg - xh * sgx);
    }
  }
  return { gradX, gradGamma, gradBeta };
}
