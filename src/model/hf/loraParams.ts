// A model's LoRA adapters as one trainable parameter set: every A and B a view into one flat f32
// buffer (each padded to 64 elements, the views' alignment), their gradients views into a second,
// so one gradNorm and one AdamW step update them all, as the character model's flat buffer does.
// Layout: for each adapted module (loraModules.ts), A (r, in) then the B rows of each projection it
// feeds (GPT-2's c_attn: q's, k's, v's), each block padded.
import type { Backend } from '../../backend/backend.ts';
import type { Tensor } from '../../backend/tensor.ts';
import type { FlatTrainable } from './flatOptimizer.ts';
import type { AdapterGrads } from './hfBackward.ts';
import type { HfModel } from './hfModel.ts';
import type { ValueHead } from './valueHead.ts';
import { valueHeadInit } from './valueHead.ts';
import { loraInitValues, loraScaling, type LoraAdapter, type LoraSettings, type LoraTarget, type ModelAdapters } from './lora.ts';
import { type AdapterModule, adapterModules } from './loraModules.ts';

const ALIGN = 64;
const padded = (n: number) => Math.ceil(n / ALIGN) * ALIGN;

export interface LoraTrainable extends FlatTrainable {
  settings: LoraSettings;
  size: number; // elements of the flat buffers (padding included)
  params: Tensor; // (size) f32: every adapter's A and B
  grads: Tensor; // (size) f32
  m: Tensor; // (size) f32, AdamW's first moments
  v: Tensor; // (size) f32, second moments
  decayMask: Tensor; // (size) f32: 1 on A and B (HF Trainer decays every weight matrix), 0 on padding
  adapters: ModelAdapters; // views of params
  adapterGrads: AdapterGrads; // views of grads
  /** Per adapted module (PEFT's unit), its A and its projections' B row blocks: what an export writes. */
  modules: TrainableModule[];
  /** The critic's value head w (1, D) and b (1), after the adapters in the same buffers (null for an actor). */
  valueHead: { params: ValueHead; grads: ValueHead } | null;
  steps: number;
}

export interface TrainableModule {
  module: AdapterModule;
  a: Tensor; // (r, in) view of params
  b: Tensor[]; // per module.slots entry, (to − from, r) views of params; stacked they are lora_B
}

/** Where a module's A and each of its projections' B rows sit in the flat buffers. */
interface Slot {
  module: AdapterModule;
  aAt: number;
  bAt: number[]; // per module.slots entry
}

function layout(model: HfModel, s: LoraSettings): { slots: Slot[]; size: number } {
  const slots: Slot[] = [];
  let at = 0;
  for (const module of adapterModules(model.arch, s.targets)) {
    const aAt = at;
    at += padded(s.r * module.in);
    const bAt = module.slots.map((p) => {
      const here = at;
      at += padded((p.to - p.from) * s.r);
      return here;
    });
    slots.push({ module, aAt, bAt });
  }
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
  const r = settings.r;
  slots.forEach(({ module, aAt, bAt }, i) => {
    const init = loraInitValues(r, module.in, module.out, (seed + i * 0x9e3779b9) >>> 0);
    host.set(init.a, aAt);
    decay.fill(1, aAt, aAt + r * module.in);
    module.slots.forEach((p, j) => {
      decay.fill(1, bAt[j], bAt[j] + (p.to - p.from) * r);
    });
  });
  const params = be.tensor(host, [size]);
  const grads = be.zeros([size]);
  const scaling = loraScaling(settings);
  const layers: Partial<Record<LoraTarget, LoraAdapter>>[] = model.weights.layers.map(() => ({}));
  const adapterGrads: AdapterGrads = model.weights.layers.map(() => ({}));
  const modules: TrainableModule[] = [];
  for (const { module, aAt, bAt } of slots) {
    // One A view per module, shared by the projections it feeds (their gradients add up in one gradA).
    const a = be.view(params, aAt, [r, module.in]);
    const gradA = be.view(grads, aAt, [r, module.in]);
    const bs = module.slots.map((p, j) => {
      const rows = p.to - p.from;
      const b = be.view(params, bAt[j], [rows, r]);
      layers[module.layer][p.target] = { a, b, scaling };
      adapterGrads[module.layer][p.target] = { a: gradA, b: be.view(grads, bAt[j], [rows, r]) };
      return b;
    });
    modules.push({ module, a, b: bs });
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
    modules,
    valueHead: valueHead ? { params: head(params), grads: head(grads) } : null,
    steps: 0,
  };
}

/** Zeroes the adapters' gradients; one AdamW step over them (flatOptimizer.ts). */
export { flatOptimizerStep as loraOptimizerStep, zeroFlatGrads as zeroLoraGrads } from './flatOptimizer.ts';

/** Frees the flat buffers (the views go with them). */
export function disposeLoraTrainable(be: Backend, t: LoraTrainable): void {
  be.dispose(t.params, t.grads, t.m, t.v, t.decayMask);
}

/** A trainable's moving state copied on the device: what the NaN guard puts back. */
export interface LoraSnapshot {
  params: Tensor;
  m: Tensor;
  v: Tensor;
  steps: number;
}

/** Copies `t`'s parameters, moments and step count into `into` (allocated on first use). */
export function saveLora(be: Backend, t: LoraTrainable, into: LoraSnapshot | null): LoraSnapshot {
  const snap = into ?? { params: be.zeros([t.size]), m: be.zeros([t.size]), v: be.zeros([t.size]), steps: 0 };
  be.copy(t.params, snap.params);
  be.copy(t.m, snap.m);
  be.copy(t.v, snap.v);
  snap.steps = t.steps;
  return snap;
}

/** Puts a saved state back (the views see it at once: they share the flat buffers). */
export function restoreLora(be: Backend, t: LoraTrainable, snap: LoraSnapshot): void {
  be.copy(snap.params, t.params);
  be.copy(snap.m, t.m);
  be.copy(snap.v, t.v);
  t.steps = snap.steps;
}

export function disposeLoraSnapshot(be: Backend, snap: LoraSnapshot | null): void {
  if (snap) be.dispose(snap.params, snap.m, snap.v);
}
