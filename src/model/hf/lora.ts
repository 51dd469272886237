// LoRA adapters on a frozen linear layer, as PEFT's lora.Linear computes them (dropout 0):
// y = x·Wᵀ + bias + s·(x·Aᵀ)·Bᵀ with lora_A.weight A (r, in), lora_B.weight B (out, r) and
// s = lora_alpha / r (lora_alpha / √r with rsLoRA). PEFT's default init (init_lora_weights=True):
// A Kaiming-uniform with a = √5, i.e. U(−1/√in, 1/√in), and B = 0, so the adapted model starts
// equal to its base — iteration 0's actor is the reference model. No kernel of its own: the
// frozen weight goes through linear (f16 or f32), the adapters through matmul, in f32.
// float64 reference: src/reference/nn/lora.ts.
import type { Backend } from '../../backend/backend.ts';
import type { Tensor } from '../../backend/tensor.ts';
import { scale } from '../../ops/elementwise.ts';
import { linear, linearBackward } from '../../ops/linear.ts';
import { matmul, matmulBackward, matmulResidual } from '../../ops/matmul.ts';
import { Rng } from '../../util/rng.ts';

/** The projections of a decoder layer PEFT targets by name (Llama, Qwen2, Qwen3). */
export const LORA_TARGETS = ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'] as const;
export type LoraTarget = (typeof LORA_TARGETS)[number];

export interface LoraSettings {
  r: number; // rank ≥ 1
  alpha: number; // lora_alpha
  rslora: boolean; // scaling alpha/√r instead of alpha/r
  targets: readonly LoraTarget[];
}

/** PEFT's scaling: lora_alpha / r, or lora_alpha / √r with use_rslora. */
export function loraScaling(s: Pick<LoraSettings, 'r' | 'alpha' | 'rslora'>): number {
  return s.rslora ? s.alpha / Math.sqrt(s.r) : s.alpha / s.r;
}

export interface LoraAdapter {
  a: Tensor; // (r, in) f32, lora_A.weight (trained)
  b: Tensor; // (out, r) f32, lora_B.weight (trained)
  scaling: number;
}

/** Host values of a fresh adapter with PEFT's default init: A ~ U(−1/√in, 1/√in), B = 0. */
export function loraInitValues(r: number, inFeatures: number, outFeatures: number, seed: number): { a: Float64Array; b: Float64Array } {
  if (!Number.isInteger(r) || r < 1) throw new Error(`LoRA rank r: ${r} is not an integer ≥ 1`);
  const rng = new Rng(seed);
  const bound = 1 / Math.sqrt(inFeatures);
  const a = Float64Array.from({ length: r * inFeatures }, () => Math.fround(rng.uniform(-bound, bound)));
  return { a, b: new Float64Array(outFeatures * r) };
}

export interface LoraLinearArgs {
  x: Tensor; // (…, in) f32
  weight: Tensor; // (out, in) f16 or f32, frozen
  bias?: Tensor | null; // (out) f32, frozen
  adapter: LoraAdapter;
}

export interface LoraLinearResult {
  y: Tensor; // (…, out) f32
  scaledDown: Tensor; // (…, r) f32, s·x·Aᵀ: the backward's input to gradB
}

export function loraLinear(be: Backend, { x, weight, bias, adapter }: LoraLinearArgs): LoraLinearResult {
  const scaledDown = matmul(be, { a: x, b: adapter.a, transB: true });
  scale(be, { x: scaledDown, alpha: adapter.scaling });
  const base = linear(be, { x, weight, bias: bias ?? null });
  const y = matmulResidual(be, { a: scaledDown, b: adapter.b, transB: true, residual: base });
  be.dispose(base);
  return { y, scaledDown };
}

export interface LoraLinearBackwardArgs {
  gradY: Tensor; // (…, out) f32
  x: Tensor; // (…, in) f32, the forward's input
  weight: Tensor; // (out, in), frozen
  adapter: LoraAdapter;
  scaledDown: Tensor; // the forward's s·x·Aᵀ
  gradA: Tensor; // (r, in) f32: += ∂/∂A
  gradB: Tensor; // (out, r) f32: += ∂/∂B
}

/** Accumulates gradA and gradB; returns gradX (…, in) = gradY·W + s·(gradY·B)·A. */
export function loraLinearBackward(be: Backend, { gradY, x, weight, adapter, scaledDown, gradA, gradB }: LoraLinearBackwardArgs): Tensor {
  // gradB += gᵀ·(s·u); the returned g·B, times s, is the gradient at u = x·Aᵀ.
  const gradDown = matmulBackward(be, { gradOut: gradY, a: scaledDown, b: adapter.b, transB: true, gradB, needGradA: true })!;
  scale(be, { x: gradDown, alpha: adapter.scaling });
  const gradX = matmulBackward(be, { gradOut: gradDown, a: x, b: adapter.a, transB: true, gradB: gradA, needGradA: true })!;
  be.dispose(gradDown);
  return linearBackward(be, { gradY, weight, into: gradX });
}

/** A module's key in PEFT's adapter_model.safetensors (adapter name dropped, as PEFT saves). */
export function peftAdapterKey(modulePath: string, which: 'A' | 'B'): string {
  return `base_model.model.${modulePath}.lora_${which}.weight`;
}

/** PEFT's adapter_config.json for these settings (dropout 0, no bias trained, a causal LM). */
export function peftAdapterConfig(s: LoraSettings, baseModel: string): Record<string, unknown> {
  return {
    peft_type: 'LORA',
    task_type: 'CAUSAL_LM',
    base_model_name_or_path: baseModel,
    r: s.r,
    lora_alpha: s.alpha,
    use_rslora: s.rslora,
    target_modules: [...s.targets],
    lora_dropout: 0,
    bias: 'none',
    fan_in_fan_out: false,
    init_lora_weights: true,
    inference_mode: true,
  };
}
