// One KV-cached decode position through a whole lm model (generate's per-token chain before
// sampling) in one dispatch on WebGPU. Math: shaders/decode_step.wgsl's header; float64 reference:
// src/reference/seq/decode.ts (the per-op chain, op for op).
import type { Backend } from '../backend/backend.ts';
import { expectDType, expectShape, type Tensor } from '../backend/tensor.ts';
import { cpu, CpuTensor } from '../backend/cpu/cpuTensor.ts';
import { gpu } from '../backend/webgpu/gpuTensor.ts';
import { kernel, type KernelSpec } from '../gpu/pipelines.ts';
import { uniformLayout, type FieldsOf } from '../gpu/uniforms.ts';
import { decodeStepRef, kvStride, type BlockOffsets, type DecodeModel } from '../reference/seq/decode.ts';
import { ATTN_MAX_S } from './attention.ts';
import { defineOp, type Op } from './op.ts';

export interface DecodeStepArgs {
  params: Tensor; // the model's flat parameter tensor, f32
  model: DecodeModel; // sizes and element offsets into params
  /** (2·nLayer·kvStride(B, Smax, D)) f32: layer l's k cache (B, Smax, D) at 2l·stride, its v cache at (2l+1)·stride. */
  kv: Tensor;
  sequences: Tensor; // (B, Smax) i32
  positions: Tensor; // (B, Smax) i32
  attnMask: Tensor; // (B, Smax) f32
  pos: number; // the column decoded
}

/** The sizes that fix a model's decode kernel: model width, heads, cache length (prompt + response). */
export interface DecodeShape {
  dModel: number;
  nHead: number;
  seqLen: number;
}

/** Model sizes, then parameter offsets in the flat parameter tensor (block 0's, and one stride per block). */
const DECODE_UNIFORM = uniformLayout('U', {
  B: 'u32',
  D: 'u32',
  H: 'u32',
  V: 'u32',
  P: 'u32',
  Smax: 'u32',
  pos: 'u32',
  n_layer: 'u32',
  eps: 'f32',
  scale: 'f32',
  kv_stride: 'u32',
  rows: 'u32',
  wte: 'u32',
  wpe: 'u32',
  lnf_g: 'u32',
  lnf_b: 'u32',
  layer_stride: 'u32',
  ln1_g: 'u32',
  ln1_b: 'u32',
  attn_w: 'u32',
  attn_b: 'u32',
  proj_w: 'u32',
  proj_b: 'u32',
  ln2_g: 'u32',
  ln2_b: 'u32',
  fc_w: 'u32',
  fc_b: 'u32',
  mlp_w: 'u32',
  mlp_b: 'u32',
});

/** One decode position through the whole model, one workgroup per ≤ 4 rows (shaders/decode_step.wgsl). */
const DECODE_WG = 64;
const DECODE_WM_MAX = 3840; // f32 words of workgroup memory at most (15 KiB, under WebGPU's 16 KiB minimum)
const DECODE_MAX_ROWS = 4; // the shader's register block

/** Workgroup words one row of the decode step uses: x, h, then q and the scores or the MLP's hidden fc (4D) over them, μ and r. */
const rowWords = (D: number, H: number, Smax: number) => 2 * D + Math.max(D + H * Smax, 4 * D) + 2;

/** Rows per decode workgroup: as many as fit (≤ 4, ≤ B). */
export function decodeRows(B: number, D: number, H: number, Smax: number): number {
  const fit = Math.floor(DECODE_WM_MAX / rowWords(D, H, Smax));
  return Math.max(1, Math.min(DECODE_MAX_ROWS, B, fit));
}

/** Words of `wm` one workgroup uses: its rows' (decodeRows with no batch limit) words. */
const groupWords = (s: DecodeShape) => decodeRows(DECODE_MAX_ROWS, s.dModel, s.nHead, s.seqLen) * rowWords(s.dModel, s.nHead, s.seqLen);

/**
 * The decode step's kernel for one model shape on one kind of adapter, its working array sized
 * for the most rows that fit (≤ 4), whatever the batch, so a shape has one pipeline an adapter
 * kind. Not a fixed declared kernel: on SwiftShader the build time of workgroup memory grows with
 * its size (its zero-initialisation is compiled per word), so each shape gets exactly what it
 * needs, and CPU adapters take decode_step_scratch, whose array is a storage buffer (⌈B/R⌉·WM
 * words, none initialised): the same arithmetic, ~1 s less to build at the page's shape.
 * `precompileShape` builds it ahead of use.
 */
export function decodeStepKernel(s: DecodeShape, cpuAdapter: boolean): KernelSpec<FieldsOf<typeof DECODE_UNIFORM>> {
  const WM = groupWords(s);
  const storage = ['read', 'rw', 'read', 'read', 'read', 'rw', 'read'] as const;
  if (cpuAdapter)
    return kernel({ shader: 'decode_step_scratch', entry: 'decode_step', uniform: DECODE_UNIFORM, storage: [...storage, 'rw'], constants: { WG: DECODE_WG, WM } }, 'cpu');
  return kernel({ shader: 'decode_step', entry: 'decode_step', uniform: DECODE_UNIFORM, storage, constants: { WG: DECODE_WG, WM } }, 'gpu');
}

/** Both adapter kinds' decode step for one shape, for building ahead (Backend.precompile keeps its own kind's). */
export function decodeStepKernels(s: DecodeShape): KernelSpec[] {
  return [decodeStepKernel(s, false), decodeStepKernel(s, true)];
}

/**
 * Builds ahead of use what decoding at this shape needs beyond the fixed kernels (on WebGPU the
 * fused decode step, whose pipeline is sized per shape). Optional: a kernel not built is built on
 * first use. Resolves at once on the CPU backend.
 */
export function precompileShape(be: Backend, shape: DecodeShape): Promise<void> {
  return be.precompile(decodeStepKernels(shape));
}

const BLOCK_FIELDS: (keyof BlockOffsets)[] = ['ln1G', 'ln1B', 'attnW', 'attnB', 'projW', 'projB', 'ln2G', 'ln2B', 'fcW', 'fcB', 'mlpW', 'mlpB'];

/**
 * Embeds column `pos` of sequences / positions, runs every block (writing that position's k and v
 * into the caches and attending under attnMask to keys j ≤ pos), then ln_f and the tied head →
 * logits (B, V) f32.
 */
export const decodeStep: Op<DecodeStepArgs, Tensor> = defineOp({
  name: 'decodeStep',
  kernels: [],
  check({ params, model: m, kv, sequences, positions, attnMask, pos }) {
    if (sequences.shape.length !== 2) throw new Error(`decodeStep sequences: expected (B, Smax), got [${sequences.shape.join(', ')}]`);
    const [B, Smax] = sequences.shape;
    expectDType('decodeStep sequences', sequences, 'i32');
    expectDType('decodeStep positions', positions, 'i32');
    expectShape('decodeStep positions', positions, [B, Smax]);
    expectShape('decodeStep attnMask', attnMask, [B, Smax]);
    const D = m.dModel;
    const H = m.nHead;
    if (!(D >= 1 && D <= 256) || D % H !== 0 || D / H > 64) throw new Error(`decodeStep: dModel ${D} with ${H} heads: need dModel ≤ 256 divisible by nHead, head width ≤ 64`);
    if (Smax > ATTN_MAX_S || H * Smax > 1024) throw new Error(`decodeStep: ${H} heads × cache length ${Smax} exceeds the kernel's 1024 scores (Smax ≤ ${ATTN_MAX_S})`);
    if (!Number.isInteger(pos) || pos < 0 || pos >= Smax) throw new Error(`decodeStep: pos ${pos} outside [0, ${Smax})`);
    if (m.blocks.length !== m.nLayer) throw new Error(`decodeStep: ${m.blocks.length} block offsets for ${m.nLayer} layers`);
    const stride = kvStride(B, Smax, D);
    expectShape('decodeStep kv', kv, [2 * m.nLayer * stride]);
    const V = m.vocabSize;
    const spans: [string, number, number][] = [
      ['wte', m.wte, V * D],
      ['wpe', m.wpe, m.maxPos * D],
      ['ln_f.weight', m.lnfG, D],
      ['ln_f.bias', m.lnfB, D],
    ];
    m.blocks.forEach((o, l) => {
      const sizes: Record<keyof BlockOffsets, number> = {
        ln1G: D,
        ln1B: D,
        attnW: 3 * D * D,
        attnB: 3 * D,
        projW: D * D,
        projB: D,
        ln2G: D,
        ln2B: D,
        fcW: 4 * D * D,
        fcB: 4 * D,
        mlpW: 4 * D * D,
        mlpB: D,
      };
      for (const k of Object.keys(sizes) as (keyof BlockOffsets)[]) spans.push([`block ${l} ${k}`, o[k], sizes[k]]);
    });
    for (const [name, off, n] of spans) {
      if (!Number.isInteger(off) || off < 0 || off + n > params.size) throw new Error(`decodeStep: ${name} [${off}, ${off + n}) outside the ${params.size} parameters`);
    }
  },
  cpu({ params, model, kv, sequences, positions, attnMask, pos }) {
    const [B, Smax] = sequences.shape;
    const logits = decodeStepRef(cpu(params).data, model, cpu(kv).data, cpu(sequences).data, cpu(positions).data, cpu(attnMask).data, B, Smax, pos);
    return new CpuTensor(logits, [B, model.vocabSize], 'f32');
  },
  webgpu({ params, model, kv, sequences, positions, attnMask, pos }, be) {
    const [B, Smax] = sequences.shape;
    const { dModel: D, nHead: H, vocabSize: V } = model;
    // The uniform block holds block 0's offsets and one stride: the flat layout repeats per block.
    const b0 = model.blocks[0];
    const layerStride = model.nLayer > 1 ? model.blocks[1].ln1G - b0.ln1G : 0;
    model.blocks.forEach((o, l) => {
      for (const k of BLOCK_FIELDS) {
        if (o[k] !== b0[k] + l * layerStride) throw new Error(`decodeStep: block ${l} ${k} at ${o[k]} is not block 0's offset + ${l}·${layerStride}`);
      }
    });
    // The dense layers read weights 4 columns at a time (binding 7 = params as vec4f).
    const offsets = [model.wte, model.wpe, model.lnfG, model.lnfB, layerStride, ...BLOCK_FIELDS.map((k) => b0[k])];
    if (D % 4 !== 0 || offsets.some((o) => o % 4 !== 0)) throw new Error(`decodeStep on WebGPU needs dModel (${D}) and every parameter offset to be multiples of 4`);
    const logits = be.empty([B, V]);
    const R = decodeRows(B, D, H, Smax);
    const u = {
      B,
      D,
      H,
      V,
      P: model.maxPos,
      Smax,
      pos,
      n_layer: model.nLayer,
      eps: model.eps,
      scale: 1 / Math.sqrt(D / H),
      kv_stride: kvStride(B, Smax, D),
      rows: R,
      wte: model.wte,
      wpe: model.wpe,
      lnf_g: model.lnfG,
      lnf_b: model.lnfB,
      layer_stride: layerStride,
      ln1_g: b0.ln1G,
      ln1_b: b0.ln1B,
      attn_w: b0.attnW,
      attn_b: b0.attnB,
      proj_w: b0.projW,
      proj_b: b0.projB,
      ln2_g: b0.ln2G,
      ln2_b: b0.ln2B,
      fc_w: b0.fcW,
      fc_b: b0.fcB,
      mlp_w: b0.mlpW,
      mlp_b: b0.mlpB,
    };
    const shape = { dModel: D, nHead: H, seqLen: Smax };
    const groups = Math.ceil(B / R);
    // CPU adapters: binding 8, the groups' working arrays, (⌈B/R⌉, WM) f32, written before read.
    const wm = be.rt.cpuAdapter ? be.empty([groups * groupWords(shape)]) : null;
    const buffers = [gpu(params), gpu(kv), gpu(sequences), gpu(positions), gpu(attnMask), gpu(logits), gpu(params), ...(wm ? [gpu(wm)] : [])];
    be.rt.dispatch(decodeStepKernel(shape, be.rt.cpuAdapter), buffers, u, [groups]);
    be.dispose(wm);
    return logits;
  },
});
