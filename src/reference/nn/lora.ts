// float64 reference of a LoRA linear layer (PEFT's lora.Linear with dropout 0) and its backward:
// the oracle for src/model/hf/lora.ts, which composes the matmul and linear kernels.
//   u = x·Aᵀ                       (M, r)
//   y = x·Wᵀ + bias + s·u·Bᵀ       (M, N), s = lora_alpha / r (÷ √r with rsLoRA)
// Backward of Σ g ⊙ y (W and bias frozen):
//   gradB = s·gᵀ·u (N, r);  h = s·g·B (M, r);  gradA = hᵀ·x (r, K);  gradX = g·W + h·A (M, K)
import { matmulRef } from './matmul.ts';

export interface LoraRefShapes {
  M: number; // rows (tokens)
  K: number; // in-features
  N: number; // out-features
  r: number; // rank
  scaling: number; // s
}

export function loraLinearRef(
  x: ArrayLike<number>, // (M, K)
  weight: ArrayLike<number>, // (N, K)
  bias: ArrayLike<number> | null, // (N)
  a: ArrayLike<number>, // (r, K) lora_A.weight
  b: ArrayLike<number>, // (N, r) lora_B.weight
  { M, K, N, r, scaling }: LoraRefShapes,
): { y: Float64Array; u: Float64Array } {
  const y = matmulRef(x, weight, bias, M, K, N, true);
  const u = matmulRef(x, a, null, M, K, r, true);
  const delta = matmulRef(u, b, null, M, r, N, true);
  for (let i = 0; i < y.length; i++) y[i] += scaling * delta[i];
  return { y, u };
}

export interface LoraGradsRef {
  gradX: Float64Array; // (M, K)
  gradA: Float64Array; // (r, K)
  gradB: Float64Array; // (N, r)
}

export function loraLinearBackwardRef(
  gradY: ArrayLike<number>, // (M, N)
  x: ArrayLike<number>, // (M, K)
  weight: ArrayLike<number>, // (N, K)
  a: ArrayLike<number>, // (r, K)
  b: ArrayLike<number>, // (N, r)
  { M, K, N, r, scaling }: LoraRefShapes,
): LoraGradsRef {
  const u = matmulRef(x, a, null, M, K, r, true);
  const gradB = new Float64Array(N * r);
  for (let m = 0; m < M; m++)
    for (let n = 0; n < N; n++) {
      const g = scaling * gradY[m * N + n];
      for (let j = 0; j < r; j++) gradB[n * r + j] += g * u[m * r + j];
    }
  const h = matmulRef(gradY, b, null, M, N, r, false); // g·B
  for (let i = 0; i < h.length; i++) h[i] *= scaling;
  const gradA = new Float64Array(r * K);
  for (let m = 0; m < M; m++)
    for (let j = 0; j < r; j++) {
      const hj = h[m * r + j];
      for (let k = 0; k < K; k++) gradA[j * K + k] += hj * x[m * K + k];
    }
  const gradX = matmulRef(gradY, weight, null, M, N, K, false); // g·W
  const hA = matmulRef(h, a, null, M, r, K, false);
  for (let i = 0; i < gradX.length; i++) gradX[i] += hA[i];
  return { gradX, gradA, gradB };
}
