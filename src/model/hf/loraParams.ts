// A model's LoRA adapters as one trainable parameter set: every A and B a view into one flat f32
// buffer (each padded to 64 elements, the views' alignment), their gradients views into a second,
// so one gradNorm and one AdamW step update them all, as the character model's flat buffer does.
// Layout: for each layer, for each target in the settings' order, A (r, in) then B (out, r).
import type { Backend } from '../../backend/backend.ts';
import type { Tensor } from '../../backend/tensor.ts';
import { fill } from '../../ops/elementwise.ts';
import { adamw, gradNorm } from '../../ops/optim.ts';
import { NO_CLIP, type OptimizerParams } from '../gpt.ts';
import type { AdapterGrads } from './hfBackward.ts';
import type { HfModel } from './hfModel.ts';
import type { ValueHead } from './valueHead.ts';
import { valueHeadInit } from './valueHead.ts';
import { LORA_TARGET_WEIGHT, loraInitValues, loraScaling, type LoraAdapter, type LoraSettings, type LoraTarget, type ModelAdapters } from './lora.ts';

const ALIGN = 64;
const padded = (n: number) => Math.ceil(n / ALIGN) * ALIGN;

export interface LoraTrainable {
  settings: LoraSettings;
  size: number; // elements of the flat buffers (padding included)
  params: Tensor; // (size) f32: every adapter's A and B
  grads: Tensor; // (size) f32
  m: Tensor; // (size) f32, AdamW's first moments
  v: Tensor; // (size) f32, second moments
  decayMask: Tensor; // (size) f32: 1 on A and B (HF Trainer decays every weight matrix), 0 on padding
  adapters: ModelAdapters; // views of params
  adapterGrads: AdapterGrads; // views of grads
  /** The critic's value head w (1, D) and b (1), after the adapters in the same buffers (null for an actor). */
  valueHead: { params: ValueHead; grads: ValueHead } | null;
  steps: number;
}

/** Where each adapter's A and B sit in the flat buffers. */
interface Slot {
  layer: number;
  target: LoraTarget;
  out: number;
  in: number;
  aAt: number;
  bAt: number;
}

function layout(model: HfModel, s: LoraSettings): { slots: Slot[]; size: number } {
  if (model.arch.family === 'gpt2') throw new Error("LoRA adapters: GPT-2's Conv1D layers (c_attn, c_proj, c_fc) are not supported; Llama, Qwen2 and Qwen3 are");
  const slots: Slot[] = [];
  let at = 0;
  model.weights.layers.forEach((layer, l) => {
    for (const target of s.targets) {
      const w = layer[LORA_TARGET_WEIGHT[target]];
      if (!w) throw new Error(`LoRA adapters: layer ${l} has no ${target}`);
      const [out, inF] = w.w.shape;
      const aAt = at;
      at += padded(s.r * inF);
      const bAt = at;
      at += padded(out * s.r);
      slots.push({ layer: l, target, out, in: inF, aAt, bAt });
    }
  });
  return { slots, size: at };
}

/**
 * Fresh adapters with PEFT's init (A uniform ±1/√in from `seed`, B = 0), zero moments and gradients;
 * with `valueHead`, a critic's head after them (weight N(0, 0.02²) decayed, bias 0 not decayed).
 */
export function newLoraTrainable(model: HfModel, settings: LoraSettings, seed: number, valueHead = false): LoraTrainable {
  const be: Backend = model.be;
  const { slots, size: adaptersSize } = layout(model, settings);
  const D = model.arch.dModel;
  const headW = adaptersSize;
  const headB = headW + padded(D);
  const size = valueHead ? headB + ALIGN : adaptersSize;
  const host = new Float64Array(size);
  const decay = new Float64Array(size);
  if (valueHead) {
    host.set(valueHeadInit(D, (seed ^ 0x5bd1e995) >>> 0).w, headW);
    decay.fill(1, headW, headW + D);
  }
  slots.forEach((slot, i) => {
    const init = loraInitValues(settings.r, slot.in, slot.out, (seed + i * 0x9e3779b9) >>> 0);
    host.set(init.a, slot.aAt);
    decay.fill(1, slot.aAt, slot.aAt + settings.r * slot.in);
    decay.fill(1, slot.bAt, slot.bAt + slot.out * settings.r);
  });
  const params = be.tensor(host, [size]);
  const grads = be.zeros([size]);
  const scaling = loraScaling(settings);
  const layers: Partial<Record<LoraTarget, LoraAdapter>>[] = model.weights.layers.map(() => ({}));
  const adapterGrads: AdapterGrads = model.weights.layers.map(() => ({}));
  for (const slot of slots) {
    layers[slot.layer][slot.target] = { a: be.view(params, slot.aAt, [settings.r, slot.in]), b: be.view(params, slot.bAt, [slot.out, settings.r]), scaling };
    adapterGrads[slot.layer][slot.target] = { a: be.view(grads, slot.aAt, [settings.r, slot.in]), b: be.view(grads, slot.bAt, [slot.out, settings.r]) };
  }
  const head = (buf: Tensor): ValueHead => ({ w: be.view(buf, headW, [1, D]), b: be.view(buf, headB, [1]) });
  return {
    settings,
    size,
    params,
    grads,
    m: be.zeros([size]),
    v: be.zeros([size]),
    decayMask: be.tensor(decay, [size]),
    adapters: { settings, layers },
    adapterGrads,
    valueHead: valueHead ? { params: head(params), grads: head(grads) } : null,
    steps: 0,
  };
}

/** Zeroes the gradients before a new accumulation. */
export function zeroLoraGrads(be: Backend, t: LoraTrainable): void {
  fill(be, { x: t.grads, value: 0 });
}

/** One AdamW step over every adapter (global-norm clipping when hp.maxGradNorm > 0); returns the pre-clip gradient norm (1). */
export function loraOptimizerStep(be: Backend, t: LoraTrainable, hp: OptimizerParams): Tensor {
  const norm = gradNorm(be, { grads: t.grads });
  t.steps++;
  const maxGradNorm = hp.maxGradNorm > 0 ? hp.maxGradNorm : NO_CLIP;
  adamw(be, { params: t.params, grads: t.grads, m: t.m, v: t.v, decayMask: t.decayMask, gradNorm: norm, hp: { ...hp, maxGradNorm, step: t.steps } });
  return norm;
}

/** Frees the flat buffers (the views go with them). */
export function disposeLoraTrainable(be: Backend, t: LoraTrainable): void {
  be.dispose(t.params, t.grads, t.m, t.v, t.decayMask);
}
