// The buffers a Hugging Face model holds on the device, from its architecture alone: every tensor
// uploadWeights (deviceWeights.ts) makes, with its shape and dtype, plus the rope frequency table
// HfModel.load adds. The memory plan counts these bytes before anything is allocated, and the bench
// builds random weights of exactly this layout without a folder.
//   dense weights (out, in) and the embedding: the weight dtype (f16 = two values per 32-bit word)
//   norms, biases, Qwen3's q/k norms, GPT-2's position table: f32
//   LM head: f32 row parts; the embedding's own parts when tied and f32, an f32 copy when tied and f16
//   tables (embedding, head): row parts of at most one binding (tableRowParts)
import { storageBytes } from '../../backend/tensor.ts';
import { sizeClass } from '../../gpu/bufferPool.ts';
import { tableRowParts } from '../../ops/embeddingRows.ts';
import type { HfArch } from './arch.ts';

/** The dtype frozen dense weights and the embedding live in on the device. */
export type WeightDType = 'f16' | 'f32';

export interface LinearOf<T> {
  w: T; // (out, in) f16 or f32
  b: T | null; // (out) f32
}

export interface NormOf<T> {
  w: T; // (D) f32 (RMSNorm weight, LayerNorm gamma)
  b: T | null; // (D) f32 LayerNorm beta; null for RMSNorm
}

export interface LayerOf<T> {
  inputNorm: NormOf<T>;
  q: LinearOf<T>; // (H·Dh, D)
  k: LinearOf<T>; // (Hkv·Dh, D)
  v: LinearOf<T>; // (Hkv·Dh, D)
  o: LinearOf<T>; // (D, H·Dh)
  qNorm: T | null; // (Dh) f32, Qwen3
  kNorm: T | null; // (Dh) f32, Qwen3
  postNorm: NormOf<T>;
  gate: LinearOf<T> | null; // (F, D), gated MLP only
  up: LinearOf<T>; // (F, D)
  down: LinearOf<T>; // (D, F)
}

export interface WeightsOf<T> {
  embed: T[]; // row parts (V_p, D) of the (V, D) table, weight dtype
  positions: T | null; // (maxPositions, D) f32, GPT-2's learned positions
  layers: LayerOf<T>[];
  finalNorm: NormOf<T>;
  head: T[]; // row parts (V_p, D) f32 of the head (the very embedding parts when tied and f32)
}

export interface BufferSpec {
  name: string;
  shape: number[];
  dtype: 'f16' | 'f32' | 'i32';
}

export interface WeightLayout {
  weights: WeightsOf<BufferSpec>;
  /** (Dh/2, 2) i32 rope frequency words; null for GPT-2's learned positions. */
  frequencies: BufferSpec | null;
}

export function weightLayout(a: HfArch, dtype: WeightDType, tableBytes: number): WeightLayout {
  const D = a.dModel;
  const qOut = a.nHead * a.headDim;
  const kvOut = a.nKvHead * a.headDim;
  const f32 = (name: string, ...shape: number[]): BufferSpec => ({ name, shape, dtype: 'f32' });
  const dense = (name: string, out: number, inn: number, bias: boolean): LinearOf<BufferSpec> => ({
    w: { name, shape: [out, inn], dtype },
    b: bias ? f32(`${name} bias`, out) : null,
  });
  const norm = (name: string): NormOf<BufferSpec> => ({ w: f32(name, D), b: a.norm.kind === 'layer' ? f32(`${name} bias`, D) : null });
  const table = (name: string, dt: WeightDType): BufferSpec[] => {
    const parts = tableRowParts(a.vocab, D, dt, tableBytes);
    return parts.map((rows, i) => ({ name: parts.length > 1 ? `${name} part ${i + 1} of ${parts.length}` : name, shape: [rows, D], dtype: dt }));
  };
  const layers = Array.from({ length: a.nLayer }, (_, l): LayerOf<BufferSpec> => {
    const p = `layer ${l}`;
    return {
      inputNorm: norm(`${p} input norm`),
      q: dense(`${p} q`, qOut, D, a.qkvBias),
      k: dense(`${p} k`, kvOut, D, a.qkvBias),
      v: dense(`${p} v`, kvOut, D, a.qkvBias),
      o: dense(`${p} o`, D, qOut, a.oBias),
      qNorm: a.qkNorm ? f32(`${p} q norm`, a.headDim) : null,
      kNorm: a.qkNorm ? f32(`${p} k norm`, a.headDim) : null,
      postNorm: norm(`${p} post norm`),
      gate: a.mlp === 'gated' ? dense(`${p} gate`, a.dFf, D, a.mlpBias) : null,
      up: dense(`${p} up`, a.dFf, D, a.mlpBias),
      down: dense(`${p} down`, D, a.dFf, a.mlpBias),
    };
  });
  const embed = table('embedding', dtype);
  const head = a.tiedHead && dtype === 'f32' ? embed : table(a.tiedHead ? 'lm head (f32 copy of the tied embedding)' : 'lm head', 'f32');
  return {
    weights: { embed, positions: a.positions === 'learned' ? f32('positions', a.maxPositions, D) : null, layers, finalNorm: norm('final norm'), head },
    frequencies: a.rope ? { name: 'rope frequencies', shape: [a.headDim / 2, 2], dtype: 'i32' } : null,
  };
}

/** Every leaf of a weight set, each once (a tied f32 head shares the embedding's parts). */
export function weightLeaves<T>(w: WeightsOf<T>): T[] {
  const out = new Set<T>([...w.embed, ...w.head]);
  const add = (...ts: (T | null)[]) => {
    for (const t of ts) if (t !== null) out.add(t);
  };
  add(w.positions, w.finalNorm.w, w.finalNorm.b);
  for (const L of w.layers) {
    add(L.inputNorm.w, L.inputNorm.b, L.qNorm, L.kNorm, L.postNorm.w, L.postNorm.b);
    for (const lin of [L.q, L.k, L.v, L.o, L.gate, L.up, L.down]) if (lin) add(lin.w, lin.b);
  }
  return [...out];
}

/** A weight set with every leaf mapped (shared leaves stay shared). */
export function mapWeights<T, U>(w: WeightsOf<T>, f: (t: T) => U): WeightsOf<U> {
  const seen = new Map<T, U>();
  const m = (t: T): U => {
    let u = seen.get(t);
    if (u === undefined) {
      u = f(t);
      seen.set(t, u);
    }
    return u;
  };
  const mn = <X extends T | null>(t: X): U | null => (t === null ? null : m(t as T));
  const lin = (l: LinearOf<T>): LinearOf<U> => ({ w: m(l.w), b: mn(l.b) });
  const norm = (n: NormOf<T>): NormOf<U> => ({ w: m(n.w), b: mn(n.b) });
  return {
    embed: w.embed.map(m),
    positions: mn(w.positions),
    layers: w.layers.map((L) => ({
      inputNorm: norm(L.inputNorm),
      q: lin(L.q),
      k: lin(L.k),
      v: lin(L.v),
      o: lin(L.o),
      qNorm: mn(L.qNorm),
      kNorm: mn(L.kNorm),
      postNorm: norm(L.postNorm),
      gate: L.gate ? lin(L.gate) : null,
      up: lin(L.up),
      down: lin(L.down),
    })),
    finalNorm: norm(w.finalNorm),
    head: w.head.map(m),
  };
}

const elements = (b: BufferSpec) => b.shape.reduce((n, d) => n * d, 1);

/** Bytes a buffer's tensor holds (f16 values two to a word). */
export const uploadBytes = (b: BufferSpec): number => storageBytes(elements(b), b.dtype);

/** Bytes its buffer takes in the WebGPU backend's pool (power-of-two size classes, 256 B least). */
export const poolBytes = (b: BufferSpec): number => sizeClass(Math.max(4, uploadBytes(b)));

/** Every buffer of the layout, each once. */
export function layoutBuffers(l: WeightLayout): BufferSpec[] {
  return [...weightLeaves(l.weights), ...(l.frequencies ? [l.frequencies] : [])];
}
