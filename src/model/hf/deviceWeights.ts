// A folder's weights uploaded to a backend once, in the layouts the ops take: every dense weight
// nn.Linear-shaped (out, in) for `linear` (GPT-2's Conv1D (in, out) transposed on the host, its fused
// c_attn split into q, k, v rows [0, D), [D, 2D), [2D, 3D) as GPT2Attention's split(dim=2)); the
// embedding as row parts within one binding each for `embeddingRows`; the LM head as f32 row parts
// for `lmHeadLogprobs`/`lmHeadLogits` (the embedding's own parts when tied and f32). Dense weights and
// the embedding are f16 (half the bytes; the kernels widen with unpack2x16float, f32 accumulation)
// or f32; norms, biases, GPT-2's position table and the head are f32.
import type { Backend, GpuOpsHost } from '../../backend/backend.ts';
import type { DType, Tensor } from '../../backend/tensor.ts';
import { tableRowParts } from '../../ops/embeddingRows.ts';
import type { HfArch } from './arch.ts';
import type { ModelFolder } from './folder.ts';
import type { HfFolderInfo } from './open.ts';
import { readWeightF16, readWeightF32 } from './readWeights.ts';
import { type LayerOf, type LinearOf, type NormOf, type WeightDType, type WeightsOf, weightLeaves } from './weightLayout.ts';
import { weight, type WeightRef } from './weights.ts';

export type { WeightDType } from './weightLayout.ts';
export type DeviceLinear = LinearOf<Tensor>;
export type DeviceNorm = NormOf<Tensor>;
export type DeviceLayer = LayerOf<Tensor>;

export interface DeviceWeights extends WeightsOf<Tensor> {
  dtype: WeightDType;
  /** Bytes of every tensor, as uploaded (a shared tied head counted once). */
  bytes: number;
}

/** The most bytes one binding of this backend holds (the least of the two WebGPU limits; unbounded on the CPU). */
export function maxBindingBytes(be: Backend): number {
  if (be.kind !== 'webgpu') return Number.POSITIVE_INFINITY;
  const l = (be as GpuOpsHost).rt.device.limits;
  return Math.min(l.maxStorageBufferBindingSize, l.maxBufferSize);
}

/** (rows, cols) row-major → (cols, rows), any element type: Conv1D's (in, out) into (out, in). */
function transposed<T extends Float32Array | Uint16Array>(x: T, rows: number, cols: number): T {
  const out = new (x.constructor as new (n: number) => T)(rows * cols);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) out[c * rows + r] = x[r * cols + c];
  return out;
}

class Uploader {
  bytes = 0;
  /** Every tensor uploaded so far: freed together when a later one fails. */
  readonly made: Tensor[] = [];
  constructor(
    readonly be: Backend,
    readonly folder: ModelFolder,
    readonly info: HfFolderInfo,
    readonly dtype: WeightDType,
    readonly bindingBytes: number,
  ) {}

  private count(t: Tensor): Tensor {
    this.made.push(t);
    this.bytes += t.dtype === 'f16' ? Math.ceil(t.size / 2) * 4 : t.size * 4;
    return t;
  }

  ref(name: string): WeightRef {
    return weight(this.info.weights, name);
  }

  has(name: string): boolean {
    return this.info.weights.byName.has(name);
  }

  async f32(name: string): Promise<Tensor> {
    const r = this.ref(name);
    return this.count(this.be.tensor(await readWeightF32(this.folder, r), r.shape));
  }

  async maybeF32(name: string): Promise<Tensor | null> {
    return this.has(name) ? this.f32(name) : null;
  }

  /** (out, in) rows [r0, r1) of a dense weight in the weight dtype, transposed from (in, out) when stored so. */
  async dense(name: string, rowRange?: [number, number]): Promise<Tensor> {
    const r = this.ref(name);
    const [s0, s1] = r.shape;
    const [out, inn] = r.layout === 'inOut' ? [s1, s0] : [s0, s1];
    const [r0, r1] = rowRange ?? [0, out];
    const pick = <T extends Float32Array | Uint16Array>(raw: T): T => {
      const wOutIn = r.layout === 'inOut' ? transposed(raw, s0, s1) : raw;
      return (r0 === 0 && r1 === out ? wOutIn : wOutIn.slice(r0 * inn, r1 * inn)) as T;
    };
    const shape = [r1 - r0, inn];
    if (this.dtype === 'f16') return this.count(this.be.tensorF16Bits(pick(await readWeightF16(this.folder, r)), shape));
    return this.count(this.be.tensor(pick(await readWeightF32(this.folder, r)), shape));
  }

  async bias(name: string, range?: [number, number]): Promise<Tensor | null> {
    if (!this.has(name)) return null;
    const r = this.ref(name);
    const all = await readWeightF32(this.folder, r);
    const v = range ? all.slice(range[0], range[1]) : all;
    return this.count(this.be.tensor(v, [v.length]));
  }

  async linear(name: string): Promise<DeviceLinear> {
    return { w: await this.dense(name), b: await this.bias(`${name}Bias`) };
  }

  async norm(name: string): Promise<DeviceNorm> {
    return { w: await this.f32(name), b: await this.maybeF32(`${name}Bias`) };
  }

  /** A (V, D) table as row parts of `dtype`, each within one binding. */
  async table(r: WeightRef, dtype: DType): Promise<Tensor[]> {
    const [V, D] = r.shape;
    const parts: Tensor[] = [];
    let start = 0;
    for (const rows of tableRowParts(V, D, dtype, this.bindingBytes)) {
      const range = { start, end: start + rows };
      const t =
        dtype === 'f16' ? this.be.tensorF16Bits(await readWeightF16(this.folder, r, range), [rows, D]) : this.be.tensor(await readWeightF32(this.folder, r, range), [rows, D]);
      parts.push(this.count(t));
      start += rows;
    }
    return parts;
  }
}

/**
 * Uploads every weight the model uses; throws naming the tensor (e.g. a value beyond f16's range).
 * Tables are split into parts of at most `bindingBytes` (default: what one binding of `be` holds).
 */
export async function uploadWeights(be: Backend, folder: ModelFolder, info: HfFolderInfo, dtype: WeightDType, bindingBytes = maxBindingBytes(be)): Promise<DeviceWeights> {
  const u = new Uploader(be, folder, info, dtype, Math.min(bindingBytes, maxBindingBytes(be)));
  try {
    return await uploadAll(u, info.arch, dtype);
  } catch (e) {
    // A file that fails half-way (unreadable, a value beyond f16) leaves nothing on the device.
    be.dispose(...u.made);
    throw e;
  }
}

async function uploadAll(u: Uploader, a: HfArch, dtype: WeightDType): Promise<DeviceWeights> {
  const layers: DeviceLayer[] = [];
  for (let l = 0; l < a.nLayer; l++) {
    const p = `layers.${l}`;
    let q: DeviceLinear;
    let k: DeviceLinear;
    let v: DeviceLinear;
    if (a.family === 'gpt2') {
      const D = a.dModel;
      const part = async (i: number): Promise<DeviceLinear> => ({
        w: await u.dense(`${p}.qkv`, [i * D, (i + 1) * D]),
        b: await u.bias(`${p}.qkvBias`, [i * D, (i + 1) * D]),
      });
      [q, k, v] = [await part(0), await part(1), await part(2)];
    } else {
      q = await u.linear(`${p}.q`);
      k = await u.linear(`${p}.k`);
      v = await u.linear(`${p}.v`);
    }
    layers.push({
      inputNorm: await u.norm(`${p}.inputNorm`),
      q,
      k,
      v,
      o: await u.linear(`${p}.o`),
      qNorm: await u.maybeF32(`${p}.qNorm`),
      kNorm: await u.maybeF32(`${p}.kNorm`),
      postNorm: await u.norm(`${p}.postNorm`),
      gate: a.mlp === 'gated' ? await u.linear(`${p}.gate`) : null,
      up: await u.linear(`${p}.up`),
      down: await u.linear(`${p}.down`),
    });
  }
  const embed = await u.table(u.ref('embed'), dtype);
  const head = a.tiedHead && dtype === 'f32' ? embed : await u.table(u.ref(a.tiedHead ? 'embed' : 'lmHead'), 'f32');
  return {
    dtype,
    embed,
    positions: await u.maybeF32('positions'),
    layers,
    finalNorm: await u.norm('finalNorm'),
    head,
    bytes: u.bytes,
  };
}

/** Every tensor of the weights, each once (a tied head shares the embedding's). */
export function weightTensors(w: DeviceWeights): Tensor[] {
  return weightLeaves<Tensor>(w);
}
