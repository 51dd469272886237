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

/** GPT-2's Conv1D modules PEFT targets by name (loraModules.ts maps them onto the projections). */
export const GPT2_LORA_MODULES = ['c_attn', 'c_proj', 'c_fc'] as const;
export type Gpt2LoraModule = (typeof GPT2_LORA_MODULES)[number];

/** A target_modules name: a Llama-family projection or a GPT-2 module. */
export type LoraModuleName = LoraTarget | Gpt2LoraModule;

export interface LoraSettings {
  r: number; // rank ≥ 1
  alpha: number; // lora_alpha
  rslora: boolean; // scaling alpha/√r instead of alpha/r
  targets: readonly LoraModuleName[]; // target_modules, of the model's family
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
  /** (…, out) f32 added to the output: the residual stream's x + o_proj(…) */
  residual?: Tensor | null;
  adapter: LoraAdapter;
}

export interface LoraLinearResult {
  y: Tensor; // (…, out) f32
  scaledDown: Tensor; // (…, r) f32, s·x·Aᵀ: the backward's input to gradB
}

export function loraLinear(be: Backend, { x, weight, bias, residual, adapter }: LoraLinearArgs): LoraLinearResult {
  const scaledDown = matmul(be, { a: x, b: adapter.a, transB: true });
  scale(be, { x: scaledDown, alpha: adapter.scaling });
  const base = linear(be, { x, weight, bias: bias ?? null, residual: residual ?? null });
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

/** The canonical layer weight (src/model/hf/weightLayout.ts) each PEFT target adapts. */
export const LORA_TARGET_WEIGHT = { q_proj: 'q', k_proj: 'k', v_proj: 'v', o_proj: 'o', gate_proj: 'gate', up_proj: 'up', down_proj: 'down' } as const satisfies Record<
  LoraTarget,
  string
>;

/** The transformers module path of a target in decoder layer `layer` (Llama, Qwen2, Qwen3). */
export function loraModulePath(layer: number, target: LoraTarget): string {
  return `model.layers.${layer}.${ATTENTION_TARGETS.has(target) ? 'self_attn' : 'mlp'}.${target}`;
}
const ATTENTION_TARGETS: ReadonlySet<LoraTarget> = new Set(['q_proj', 'k_proj', 'v_proj', 'o_proj']);

/** Adapters of a whole model: per decoder layer, the adapted targets. */
export interface ModelAdapters {
  settings: LoraSettings;
  layers: Partial<Record<LoraTarget, LoraAdapter>>[];
}

/** A module's key in PEFT's adapter_model.safetensors (adapter name dropped, as PEFT saves). */
export function peftAdapterKey(modulePath: string, which: 'A' | 'B'): string {
  return `base_model.model.${modulePath}.lora_${which}.weight`;
}

/**
 * PEFT's adapter_config.json for these settings (dropout 0, no bias trained, a causal LM);
 * fanInFanOut for GPT-2's Conv1D weights, stored (in, out).
 */
export function peftAdapterConfig(s: LoraSettings, baseModel: string, fanInFanOut = false): Record<string, unknown> {
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
    fan_in_fan_out: fanInFanOut,
    init_lora_weights: true,
    inference_mode: true,
  };
}

/** Host values of one adapter: A (r, in), B (out, r). */
export interface AdapterValues {
  a: ArrayLike<number>;
  b: ArrayLike<number>;
}

/**
 * Adapters on the backend from host values, per layer and projection; `dims(layer, target)` gives
 * the adapted weight's (out, in). Values past f32 are rounded by the upload.
 */
export function uploadAdapters(
  be: Backend,
  settings: LoraSettings,
  values: readonly Partial<Record<LoraTarget, AdapterValues>>[],
  dims: (layer: number, target: LoraTarget) => { out: number; in: number },
): ModelAdapters {
  const scaling = loraScaling(settings);
  const layers = values.map((layer, l) => {
    const out: Partial<Record<LoraTarget, LoraAdapter>> = {};
    for (const [target, v] of Object.entries(layer) as [LoraTarget, AdapterValues][]) {
      const d = dims(l, target);
      out[target] = { a: be.tensor(v.a, [settings.r, d.in]), b: be.tensor(v.b, [d.out, settings.r]), scaling };
    }
    return out;
  });
  return { settings, layers };
}

/** Every tensor of `adapters`, once each (GPT-2's q, k and v share one A), for dispose. */
export function adapterTensors(adapters: ModelAdapters): Tensor[] {
  return [...new Set(adapters.layers.flatMap((layer) => Object.values(layer).flatMap((ad) => [ad.a, ad.b])))];
}
