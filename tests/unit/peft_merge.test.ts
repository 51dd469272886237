// The independent PEFT LoRA merge of tests/helpers/peftMerge.ts (issue #32's check) on tiny folders
// written byte by byte here, against merges worked out by hand: small integers, so every expected value
// is exact in F32 and BF16 and a wrong scale, a missing transpose or a swapped A/B changes it.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { mergePeftAdapter } from '../helpers/peftMerge.ts';

type Dtype = 'F32' | 'F16' | 'BF16';
interface T {
  dtype: Dtype;
  shape: number[];
  /** Values (F32, BF16: small integers are exact) or raw bytes. */
  data: number[] | Uint8Array;
}

function f32Bytes(v: number[]): Uint8Array {
  return new Uint8Array(Float32Array.from(v).buffer);
}
/** BF16: the top half of the F32 bits (exact for the small integers used here). */
function bf16Bytes(v: number[]): Uint8Array {
  const u32 = new Uint32Array(Float32Array.from(v).buffer);
  return new Uint8Array(Uint16Array.from(u32, (x) => x >>> 16).buffer);
}
/** F16 for integers 0 < |x| ≤ 2048 (exact): sign, exponent, 10-bit fraction. */
function f16Bytes(v: number[]): Uint8Array {
  const h = v.map((x) => {
    if (x === 0) return 0;
    const e = Math.floor(Math.log2(Math.abs(x)));
    return (x < 0 ? 0x8000 : 0) | ((e + 15) << 10) | ((Math.abs(x) / 2 ** e - 1) * 1024);
  });
  return new Uint8Array(Uint16Array.from(h).buffer);
}

function safetensors(tensors: Record<string, T>, metadata?: Record<string, string>): Uint8Array {
  const header: Record<string, unknown> = metadata ? { __metadata__: metadata } : {};
  const blobs: Uint8Array[] = [];
  let off = 0;
  for (const [k, t] of Object.entries(tensors)) {
    const b = t.data instanceof Uint8Array ? t.data : t.dtype === 'F32' ? f32Bytes(t.data) : t.dtype === 'BF16' ? bf16Bytes(t.data) : f16Bytes(t.data);
    header[k] = { dtype: t.dtype, shape: t.shape, data_offsets: [off, off + b.length] };
    blobs.push(b);
    off += b.length;
  }
  const h = new TextEncoder().encode(JSON.stringify(header)); // unpadded: the reader must not need padding
  const out = new Uint8Array(8 + h.length + off);
  new DataView(out.buffer).setBigUint64(0, BigInt(h.length), true);
  out.set(h, 8);
  let p = 8 + h.length;
  for (const b of blobs) {
    out.set(b, p);
    p += b.length;
  }
  return out;
}

/** The test's own reader of the merged output: header and each tensor's raw bytes. */
function readBack(path: string): { header: Record<string, { dtype: string; shape: number[]; data_offsets: [number, number] }>; bytes: (k: string) => Uint8Array } {
  const buf = new Uint8Array(readFileSync(path));
  const n = Number(new DataView(buf.buffer).getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(buf.subarray(8, 8 + n)));
  return { header, bytes: (k) => buf.subarray(8 + n + header[k].data_offsets[0], 8 + n + header[k].data_offsets[1]) };
}
function f32(path: string, key: string): number[] {
  const { header, bytes } = readBack(path);
  expect(header[key].dtype).toBe('F32');
  const b = bytes(key);
  return Array.from(new Float32Array(b.slice().buffer));
}

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'peft-merge-'));
  dirs.push(d);
  return d;
}

const CONFIG = '{"model_type":"llama","hidden_size":2}\n';
const TOKENIZER = '{"model":{"type":"BPE","vocab":{"a":0}}}\n';
/** An untouched F16 tensor with arbitrary bytes (a NaN pattern included): it must come back byte for byte. */
const EMBED: T = { dtype: 'F16', shape: [2, 2], data: new Uint8Array([0x00, 0x3c, 0x01, 0x7e, 0xff, 0xfb, 0x34, 0x12]) };

/** A base folder: its weights (one file, or shards with an index) and a few non-weight files. */
function baseFolder(weights: Record<string, T> | Record<string, Record<string, T>>, sharded = false): string {
  const dir = tmp();
  writeFileSync(join(dir, 'config.json'), CONFIG);
  writeFileSync(join(dir, 'tokenizer.json'), TOKENIZER);
  writeFileSync(join(dir, 'generation_config.json'), '{"eos_token_id":0}');
  if (!sharded) writeFileSync(join(dir, 'model.safetensors'), safetensors(weights as Record<string, T>, { format: 'pt' }));
  else {
    const weight_map: Record<string, string> = {};
    for (const [file, ts] of Object.entries(weights as Record<string, Record<string, T>>)) {
      writeFileSync(join(dir, file), safetensors(ts, { format: 'pt' }));
      for (const k of Object.keys(ts)) weight_map[k] = file;
    }
    writeFileSync(join(dir, 'model.safetensors.index.json'), JSON.stringify({ metadata: { total_size: 1, note: 'kept' }, weight_map }));
  }
  return dir;
}

function adapterFolder(config: Record<string, unknown>, tensors: Record<string, T>): string {
  const dir = tmp();
  writeFileSync(join(dir, 'adapter_config.json'), JSON.stringify({ peft_type: 'LORA', use_rslora: false, fan_in_fan_out: false, ...config }));
  writeFileSync(join(dir, 'adapter_model.safetensors'), safetensors(tensors));
  return dir;
}

// The worked example: W (out 3 × in 2), A (r 2 × in 2), B (out 3 × r 2), lora_alpha 4 → s = 4 / 2 = 2.
//   B·A = [[1,1],[0,2],[-1,3]]·[[1,0],[2,1]] = [[3,1],[4,2],[5,3]];  W + 2·B·A = [[7,4],[11,8],[15,12]].
const W = [1, 2, 3, 4, 5, 6];
const A = [1, 0, 2, 1];
const B = [1, 1, 0, 2, -1, 3];
const W_MERGED = [7, 4, 11, 8, 15, 12];
const Q = 'model.layers.0.self_attn.q_proj';

describe('mergePeftAdapter', () => {
  it('nn.Linear, F32 base: W + (α/r)·B·A written as F32; every other tensor and file byte-identical', () => {
    const base = baseFolder({ 'model.embed_tokens.weight': EMBED, [`${Q}.weight`]: { dtype: 'F32', shape: [3, 2], data: W } });
    const adapter = adapterFolder(
      { r: 2, lora_alpha: 4, target_modules: ['q_proj', 'v_proj'] },
      { [`base_model.model.${Q}.lora_A.weight`]: { dtype: 'F32', shape: [2, 2], data: A }, [`base_model.model.${Q}.lora_B.weight`]: { dtype: 'F32', shape: [3, 2], data: B } },
    );
    const out = join(tmp(), 'merged');
    expect(mergePeftAdapter(base, adapter, out)).toEqual({ merged: [`${Q}.weight`] });
    const file = join(out, 'model.safetensors');
    expect(f32(file, `${Q}.weight`)).toEqual(W_MERGED);
    const { header, bytes } = readBack(file);
    expect(header[`${Q}.weight`].shape).toEqual([3, 2]);
    expect(header.__metadata__).toEqual({ format: 'pt' });
    expect(header['model.embed_tokens.weight']).toMatchObject({ dtype: 'F16', shape: [2, 2] });
    expect(bytes('model.embed_tokens.weight')).toEqual(EMBED.data);
    for (const f of ['config.json', 'tokenizer.json', 'generation_config.json']) expect(readFileSync(join(out, f))).toEqual(readFileSync(join(base, f)));
  });

  it('BF16 base and F16 adapter: decoded, merged in float64, written as F32', () => {
    const base = baseFolder({ [`${Q}.weight`]: { dtype: 'BF16', shape: [3, 2], data: W }, 'model.norm.weight': { dtype: 'BF16', shape: [2], data: [3, -5] } });
    const adapter = adapterFolder(
      { r: 2, lora_alpha: 4, target_modules: ['q_proj'] },
      { [`base_model.model.${Q}.lora_A.weight`]: { dtype: 'F16', shape: [2, 2], data: A }, [`base_model.model.${Q}.lora_B.weight`]: { dtype: 'F16', shape: [3, 2], data: B } },
    );
    const out = tmp();
    mergePeftAdapter(base, adapter, out);
    const file = join(out, 'model.safetensors');
    expect(f32(file, `${Q}.weight`)).toEqual(W_MERGED);
    const { header, bytes } = readBack(file);
    expect(header['model.norm.weight'].dtype).toBe('BF16');
    expect(bytes('model.norm.weight')).toEqual(bf16Bytes([3, -5]));
  });

  it('rsLoRA scales by α/√r, plain LoRA by α/r', () => {
    // r 4, lora_alpha 4: rsLoRA s = 4/√4 = 2, plain s = 4/4 = 1. W = [[1,1],[1,1]], A (4 × 2), B (2 × 4):
    //   B·A = [A0 + A3, A1 + A2] = [[3,0],[1,2]];  rsLoRA W' = [[7,1],[3,5]];  plain W' = [[4,1],[2,3]].
    const base = baseFolder({ [`${Q}.weight`]: { dtype: 'F32', shape: [2, 2], data: [1, 1, 1, 1] } });
    const tensors: Record<string, T> = {
      [`base_model.model.${Q}.lora_A.weight`]: { dtype: 'F32', shape: [4, 2], data: [1, 0, 0, 1, 1, 1, 2, 0] },
      [`base_model.model.${Q}.lora_B.weight`]: { dtype: 'F32', shape: [2, 4], data: [1, 0, 0, 1, 0, 1, 1, 0] },
    };
    const rs = tmp();
    mergePeftAdapter(base, adapterFolder({ r: 4, lora_alpha: 4, use_rslora: true, target_modules: ['q_proj'] }, tensors), rs);
    expect(f32(join(rs, 'model.safetensors'), `${Q}.weight`)).toEqual([7, 1, 3, 5]);
    const plain = tmp();
    mergePeftAdapter(base, adapterFolder({ r: 4, lora_alpha: 4, use_rslora: false, target_modules: ['q_proj'] }, tensors), plain);
    expect(f32(join(plain, 'model.safetensors'), `${Q}.weight`)).toEqual([4, 1, 2, 3]);
  });

  // GPT-2's Conv1D stores (in × out). Same A, B as above, lora_alpha 6, r 2 → s = 3:
  //   (B·A)ᵀ = [[3,4,5],[1,2,3]];  Wc = [[1,2,3],[4,5,6]] + 3·(B·A)ᵀ = [[10,14,18],[7,11,15]].
  const C = 'transformer.h.0.attn.c_attn';
  const gpt2Adapter = () =>
    adapterFolder(
      { r: 2, lora_alpha: 6, fan_in_fan_out: true, target_modules: ['c_attn'] },
      { [`base_model.model.${C}.lora_A.weight`]: { dtype: 'F32', shape: [2, 2], data: A }, [`base_model.model.${C}.lora_B.weight`]: { dtype: 'F32', shape: [3, 2], data: B } },
    );

  it('fan_in_fan_out (GPT-2 Conv1D, in × out): adds s·(B·A)ᵀ; the key without `transformer.` is found', () => {
    const bias: T = { dtype: 'F32', shape: [3], data: [0.5, -0.25, 8] };
    const base = baseFolder({ 'wte.weight': EMBED, 'h.0.attn.c_attn.weight': { dtype: 'F32', shape: [2, 3], data: [1, 2, 3, 4, 5, 6] }, 'h.0.attn.c_attn.bias': bias });
    const out = tmp();
    expect(mergePeftAdapter(base, gpt2Adapter(), out)).toEqual({ merged: ['h.0.attn.c_attn.weight'] });
    const file = join(out, 'model.safetensors');
    expect(f32(file, 'h.0.attn.c_attn.weight')).toEqual([10, 14, 18, 7, 11, 15]);
    expect(readBack(file).header['h.0.attn.c_attn.weight'].shape).toEqual([2, 3]);
    expect(readBack(file).bytes('h.0.attn.c_attn.bias')).toEqual(f32Bytes([0.5, -0.25, 8]));
    expect(readBack(file).bytes('wte.weight')).toEqual(EMBED.data);
  });

  it('fan_in_fan_out with the `transformer.` prefix kept in the checkpoint', () => {
    const base = baseFolder({ [`${C}.weight`]: { dtype: 'F32', shape: [2, 3], data: [1, 2, 3, 4, 5, 6] } });
    const out = tmp();
    expect(mergePeftAdapter(base, gpt2Adapter(), out)).toEqual({ merged: [`${C}.weight`] });
    expect(f32(join(out, 'model.safetensors'), `${C}.weight`)).toEqual([10, 14, 18, 7, 11, 15]);
  });

  it('sharded base: each shard rewritten where needed, an untouched shard copied, the index kept valid', () => {
    const K = 'model.layers.0.self_attn.k_proj';
    // k_proj: W = [[0,1],[1,0],[2,2]] + 2·B·A = [[6,3],[9,4],[12,8]] (B·A as above, s = 2).
    const base = baseFolder(
      {
        'model-00001-of-00003.safetensors': { 'model.embed_tokens.weight': EMBED, [`${K}.weight`]: { dtype: 'BF16', shape: [3, 2], data: [0, 1, 1, 0, 2, 2] } },
        'model-00002-of-00003.safetensors': { [`${Q}.weight`]: { dtype: 'F32', shape: [3, 2], data: W }, 'model.norm.weight': { dtype: 'F32', shape: [2], data: [1, 2] } },
        'model-00003-of-00003.safetensors': { 'lm_head.weight': { dtype: 'F16', shape: [2, 2], data: [1, -2, 3, 4] } },
      },
      true,
    );
    const ab = (m: string): Record<string, T> => ({
      [`base_model.model.${m}.lora_A.weight`]: { dtype: 'F32', shape: [2, 2], data: A },
      [`base_model.model.${m}.lora_B.weight`]: { dtype: 'F32', shape: [3, 2], data: B },
    });
    const adapter = adapterFolder({ r: 2, lora_alpha: 4, target_modules: ['q_proj', 'k_proj'] }, { ...ab(Q), ...ab(K) });
    const out = tmp();
    expect(mergePeftAdapter(base, adapter, out)).toEqual({ merged: [`${K}.weight`, `${Q}.weight`] });
    const s1 = join(out, 'model-00001-of-00003.safetensors');
    const s2 = join(out, 'model-00002-of-00003.safetensors');
    expect(f32(s1, `${K}.weight`)).toEqual([6, 3, 9, 4, 12, 8]);
    expect(readBack(s1).bytes('model.embed_tokens.weight')).toEqual(EMBED.data);
    expect(f32(s2, `${Q}.weight`)).toEqual(W_MERGED);
    expect(readBack(s2).bytes('model.norm.weight')).toEqual(f32Bytes([1, 2]));
    const s3 = 'model-00003-of-00003.safetensors';
    expect(readFileSync(join(out, s3))).toEqual(readFileSync(join(base, s3)));
    // The index: same weight_map, every key in the shard it names, total_size = the bytes of all tensors
    // (embed 8 + k_proj 24 F32 + q_proj 24 + norm 8 + lm_head 8 = 72), other metadata kept.
    const index = JSON.parse(readFileSync(join(out, 'model.safetensors.index.json'), 'utf8'));
    const baseIndex = JSON.parse(readFileSync(join(base, 'model.safetensors.index.json'), 'utf8'));
    expect(index.weight_map).toEqual(baseIndex.weight_map);
    let total = 0;
    for (const [k, file] of Object.entries(index.weight_map as Record<string, string>)) {
      const { header } = readBack(join(out, file));
      expect(header[k], `${k} in ${file}`).toBeDefined();
      total += header[k].data_offsets[1] - header[k].data_offsets[0];
    }
    expect(total).toBe(72);
    expect(index.metadata).toEqual({ total_size: 72, note: 'kept' });
  });

  it('a module with no base weight is an error naming the key(s) tried; nothing is written', () => {
    const base = baseFolder({ [`${Q}.weight`]: { dtype: 'F32', shape: [3, 2], data: W } });
    const V = 'model.layers.0.self_attn.v_proj';
    const adapter = adapterFolder(
      { r: 2, lora_alpha: 4, target_modules: ['q_proj', 'v_proj'] },
      { [`base_model.model.${V}.lora_A.weight`]: { dtype: 'F32', shape: [2, 2], data: A }, [`base_model.model.${V}.lora_B.weight`]: { dtype: 'F32', shape: [3, 2], data: B } },
    );
    const out = join(tmp(), 'never');
    expect(() => mergePeftAdapter(base, adapter, out)).toThrow(`base model has no weight ${V}.weight for adapter module ${V}`);
    expect(existsSync(out)).toBe(false);
    const gpt2 = baseFolder({ 'h.1.attn.c_attn.weight': { dtype: 'F32', shape: [2, 3], data: [1, 2, 3, 4, 5, 6] } });
    expect(() => mergePeftAdapter(gpt2, gpt2Adapter(), out)).toThrow(
      'base model has no weight transformer.h.0.attn.c_attn.weight (nor h.0.attn.c_attn.weight) for adapter module transformer.h.0.attn.c_attn',
    );
    expect(existsSync(out)).toBe(false);
  });

  it('refuses a base weight of the wrong orientation and a module outside target_modules', () => {
    // fan_in_fan_out false on a Conv1D-shaped (in × out) weight: [2,3] is not out × in = [3,2].
    const base = baseFolder({ [`${Q}.weight`]: { dtype: 'F32', shape: [2, 3], data: [1, 2, 3, 4, 5, 6] } });
    const tensors: Record<string, T> = {
      [`base_model.model.${Q}.lora_A.weight`]: { dtype: 'F32', shape: [2, 2], data: A },
      [`base_model.model.${Q}.lora_B.weight`]: { dtype: 'F32', shape: [3, 2], data: B },
    };
    const out = join(tmp(), 'never');
    expect(() => mergePeftAdapter(base, adapterFolder({ r: 2, lora_alpha: 4, target_modules: ['q_proj'] }, tensors), out)).toThrow(
      `${Q}.weight has shape [2,3], but the adapter needs [3,2] (out × in)`,
    );
    expect(() => mergePeftAdapter(base, adapterFolder({ r: 2, lora_alpha: 4, target_modules: ['k_proj'] }, tensors), out)).toThrow(
      `${Q} is not matched by target_modules ["k_proj"]`,
    );
    expect(existsSync(out)).toBe(false);
  });
});
