// Every weight of a small Hugging Face model as one trainable parameter set (full training, e.g.
// the shipped chat model's pretraining): each weight a view into one flat f32 buffer (padded to
// 64 elements, the views' alignment), its gradient a view into a second, so one gradNorm and one
// AdamW step update them all (flatOptimizer.ts), as for the LoRA adapters.
// A tied head is the embedding's own views, so its gradient lands in the embedding's.
// Weight decay as the HF Trainer applies it: on dense weights and the embedding, not on biases,
// norms or GPT-2's positions.
import type { Backend } from '../../backend/backend.ts';
import type { Tensor } from '../../backend/tensor.ts';
import { maxBindingBytes, type DeviceWeights } from './deviceWeights.ts';
import type { FlatTrainable } from './flatOptimizer.ts';
import type { WeightGrads } from './hfBackward.ts';
import { HfModel } from './hfModel.ts';
import { mapWeights, weightLeaves, type WeightsOf } from './weightLayout.ts';

const ALIGN = 64;
const padded = (n: number) => Math.ceil(n / ALIGN) * ALIGN;

export interface FullTrainable extends FlatTrainable {
  size: number; // elements of the flat buffers (padding included)
  params: Tensor; // (size) f32: every weight
  grads: Tensor; // (size) f32
  m: Tensor; // (size) f32, AdamW's first moments
  v: Tensor; // (size) f32, second moments
  decayMask: Tensor; // (size) f32: 1 on dense weights and the embedding, 0 elsewhere
  /** The model computing on the views of `params`. */
  model: HfModel;
  /** The gradients' views, in the weights' layout. */
  weightGrads: WeightGrads;
  /** Each weight view's first element in the flat buffers. */
  offsets: Map<Tensor, number>;
  steps: number;
}

/** Where each weight sits in the flat buffers, and whether it is decayed. */
function layout(w: WeightsOf<Tensor>): { at: Map<Tensor, number>; decayed: Set<Tensor>; size: number } {
  const at = new Map<Tensor, number>();
  let size = 0;
  for (const t of weightLeaves(w)) {
    at.set(t, size);
    size += padded(t.size);
  }
  const decayed = new Set<Tensor>([...w.embed, ...w.head]);
  for (const L of w.layers) for (const lin of [L.q, L.k, L.v, L.o, L.gate, L.up, L.down]) if (lin) decayed.add(lin.w);
  return { at, decayed, size };
}

/**
 * A trainable copy of an f32 model's weights (the model itself is left as it is: the caller
 * disposes it). Refused when the weights are f16 or when the flat buffer would exceed one binding
 * (full training is for small models; a large one trains LoRA adapters).
 */
export async function newFullTrainable(model: HfModel): Promise<FullTrainable> {
  const be: Backend = model.be;
  const w = model.weights;
  if (w.dtype !== 'f32') throw new Error(`full training needs f32 weights; the model was loaded with ${w.dtype}`);
  const { at, decayed, size } = layout(w);
  const bytes = size * 4;
  if (bytes > maxBindingBytes(be))
    throw new Error(
      `full training holds every weight in one buffer of ${(bytes / 2 ** 20).toFixed(1)} MiB, past this GPU's ${(maxBindingBytes(be) / 2 ** 20).toFixed(0)} MiB per binding: train LoRA adapters instead`,
    );
  const leaves = weightLeaves(w);
  const values = await be.readMany(leaves);
  const host = new Float64Array(size);
  const decay = new Float64Array(size);
  leaves.forEach((t, i) => {
    const o = at.get(t)!;
    host.set(values[i], o);
    if (decayed.has(t)) decay.fill(1, o, o + t.size);
  });
  const params = be.tensor(host, [size]);
  const grads = be.zeros([size]);
  const viewOf = (buf: Tensor) => (t: Tensor) => be.view(buf, at.get(t)!, t.shape);
  const weights: DeviceWeights = { ...mapWeights(w, viewOf(params)), dtype: 'f32', bytes };
  const offsets = new Map<Tensor, number>();
  const paramLeaves = weightLeaves(weights);
  leaves.forEach((t, i) => {
    offsets.set(paramLeaves[i], at.get(t)!);
  });
  return {
    size,
    params,
    grads,
    m: be.zeros([size]),
    v: be.zeros([size]),
    decayMask: be.tensor(decay, [size]),
    model: HfModel.fromWeights(be, model.arch, weights),
    weightGrads: mapWeights(w, viewOf(grads)),
    offsets,
    steps: 0,
  };
}

/** The trained weights as host arrays, in the model's layout (what a folder writer reads). */
export async function fullWeightValues(t: FullTrainable): Promise<WeightsOf<Float64Array>> {
  const leaves = weightLeaves(t.model.weights);
  const values = await t.model.be.readMany(leaves);
  const byLeaf = new Map(leaves.map((l, i) => [l, values[i]]));
  return mapWeights(t.model.weights, (l) => byLeaf.get(l)!);
}

/** Frees the flat buffers (the views go with them) and the model's rope table. */
export function disposeFullTrainable(t: FullTrainable): void {
  const be = t.model.be;
  t.model.dispose(); // views: disposing them does nothing; the rope table is freed
  be.dispose(t.params, t.grads, t.m, t.v, t.decayMask);
}
