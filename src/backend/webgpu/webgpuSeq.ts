// Sequence ops on WebGPU: attention (forward, backward, KV-cached) and the sampling step.
// Each records its kernels into the shared encoder; nothing here reads back.
import { elementGrid, groups } from '../../gpu/runtime.ts';
import { uniformLayout, type FieldsOf } from '../../gpu/uniforms.ts';
import { kernel, type KernelSpec } from '../../gpu/pipelines.ts';
import { attentionDims, cachedDims, decodeStepDims, sampleDims } from '../shapes.ts';
import type { BlockOffsets, DecodeModel, DecodeShape, SampleParams, SeqOps } from '../seqOps.ts';
import type { Tensor } from '../tensor.ts';
import { gpu } from './gpuTensor.ts';
import type { GpuOpsHost } from '../backend.ts';

// Every kernel here is one thread per output row or element (see the shader headers for why).
const WG = 64;

// Uniform structs, in each shader's field order (tests/unit/wgsl_params.test.ts checks them by name).
const ATTN_UNIFORM = uniformLayout('Params', { S: 'u32', H: 'u32', D: 'u32', scale: 'f32', total: 'u32' });
const ATTN_BACKWARD_UNIFORM = uniformLayout('Params', { S: 'u32', H: 'u32', D: 'u32', scale: 'f32', nq: 'u32', total: 'u32', region1: 'u32' });
const ATTN_CACHED_UNIFORM = uniformLayout('Params', { L: 'u32', Smax: 'u32', H: 'u32', D: 'u32', start: 'u32', scale: 'f32', rows: 'u32', total: 'u32' });
const SAMPLE_UNIFORM = uniformLayout('Params', {
  B: 'u32',
  V: 'u32',
  S: 'u32',
  pos: 'u32',
  top_k: 'u32',
  top_p: 'f32',
  temperature: 'f32',
  seed: 'u32',
  eos: 'i32',
  pad: 'i32',
  has_logprobs: 'u32',
});
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

const ATTN_FORWARD = kernel({ shader: 'attention', entry: 'attention_forward', uniform: ATTN_UNIFORM, storage: ['read', 'read', 'rw', 'rw'], constants: { WG } });
const ATTN_BACKWARD = kernel({
  shader: 'attention_backward',
  entry: 'attention_backward',
  uniform: ATTN_BACKWARD_UNIFORM,
  storage: ['read', 'read', 'read', 'rw', 'rw', 'read'],
  constants: { WG },
});
const KV_CACHE_WRITE = kernel({ shader: 'attention_cached', entry: 'kv_cache_write', uniform: ATTN_CACHED_UNIFORM, storage: ['read', 'rw', 'rw'], constants: { WG } });
const ATTN_CACHED = kernel({
  shader: 'attention_cached',
  entry: 'attention_cached',
  uniform: ATTN_CACHED_UNIFORM,
  storage: ['read', 'rw', 'rw', 'read', 'rw', 'rw'],
  constants: { WG },
});
/** kv_cache_write + attention_cached for one new position (L = 1) in one dispatch. */
const ATTN_DECODE = kernel({ ...ATTN_CACHED, entry: 'attention_decode' });
/** One token step of every row: rank the vocabulary, then draw (one workgroup per row). */
const SAMPLE_STEP = kernel({ shader: 'sample', entry: 'sample_step', uniform: SAMPLE_UNIFORM, storage: ['read', 'rw', 'rw', 'rw', 'rw', 'rw', 'rw'], constants: { WG } });

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

/**
 * The decode step's kernel for one model shape, its workgroup memory sized for the most rows that
 * fit (≤ 4), whatever the batch, so a shape has one pipeline. Not a fixed declared kernel: on
 * SwiftShader its build time grows with that size (the zero-initialisation of workgroup memory is
 * compiled per word), so each shape gets exactly what it needs; `Backend.precompileShape` builds
 * it ahead of use.
 */
export function decodeStepKernel(s: DecodeShape): KernelSpec<FieldsOf<typeof DECODE_UNIFORM>> {
  const words = rowWords(s.dModel, s.nHead, s.seqLen);
  const WM = decodeRows(DECODE_MAX_ROWS, s.dModel, s.nHead, s.seqLen) * words;
  return { shader: 'decode_step', entry: 'decode_step', uniform: DECODE_UNIFORM, storage: ['read', 'rw', 'read', 'read', 'read', 'rw', 'read'], constants: { WG: DECODE_WG, WM } };
}
const BLOCK_FIELDS: (keyof BlockOffsets)[] = ['ln1G', 'ln1B', 'attnW', 'attnB', 'projW', 'projB', 'ln2G', 'ln2B', 'fcW', 'fcB', 'mlpW', 'mlpB'];

export class WebGpuSeqOps implements SeqOps {
  constructor(private readonly be: GpuOpsHost) {}

  attention(qkv: Tensor, attnMask: Tensor, nHead: number): { out: Tensor; probs: Tensor } {
    const { B, S, H, D, Dh } = attentionDims(qkv, attnMask, nHead);
    const out = this.be.empty([B * S, D]);
    const probs = this.be.empty([B, H, S, S]);
    const threads = B * H * Math.ceil(S / 4); // one per block of 4 queries
    const u = { S, H, D, scale: 1 / Math.sqrt(Dh), total: threads };
    this.be.rt.dispatch(ATTN_FORWARD, [gpu(qkv), gpu(attnMask), gpu(out), gpu(probs)], u, elementGrid(threads, WG));
    return { out, probs };
  }

  attentionBackward(gradOut: Tensor, qkv: Tensor, probs: Tensor, out: Tensor, _nHead: number): Tensor {
    // H = nHead (checked): read from probs (B,H,S,S).
    const [B, H, S] = probs.shape;
    const D = qkv.shape[1] / 3;
    const Dh = D / H;
    const gradQkv = this.be.empty([B * S, 3 * D]);
    const dscores = this.be.empty([2, B, H, S, S]); // f32 scratch: the query threads' dS, the key threads' dSᵀ
    const nq = B * H * Math.ceil(S / 4); // query threads, then as many key threads
    const u = { S, H, D, scale: 1 / Math.sqrt(Dh), nq, total: 2 * nq, region1: B * H * S * S };
    this.be.rt.dispatch(ATTN_BACKWARD, [gpu(gradOut), gpu(qkv), gpu(probs), gpu(dscores), gpu(gradQkv), gpu(out)], u, elementGrid(2 * nq, WG));
    // Later users of the pooled buffer are recorded after this dispatch, so they run after it.
    this.be.dispose(dscores);
    return gradQkv;
  }

  attentionCached(qkv: Tensor, kCache: Tensor, vCache: Tensor, attnMask: Tensor, start: number, nHead: number): Tensor {
    const { B, L, Smax, H, D, Dh } = cachedDims(qkv, kCache, start, nHead);
    const out = this.be.empty([B * L, D]);
    const scratch = this.be.empty([B, H, L, Smax]); // (B,H,L,Smax) f32 softmax rows
    const rows = B * H * L;
    const total = B * L * D;
    const u = { L, Smax, H, D, start, scale: 1 / Math.sqrt(Dh), rows, total };
    const bufs = [gpu(qkv), gpu(kCache), gpu(vCache), gpu(attnMask), gpu(out), gpu(scratch)];
    if (L === 1) {
      // Decode: cache write and attention in one dispatch (see attention_decode's header).
      this.be.rt.dispatch(ATTN_DECODE, bufs, u, [groups(rows, WG)]);
    } else {
      this.be.rt.dispatch(KV_CACHE_WRITE, bufs.slice(0, 3), u, [groups(total, WG)]);
      this.be.rt.dispatch(ATTN_CACHED, bufs, u, [groups(rows, WG)]);
    }
    this.be.dispose(scratch);
    return out;
  }

  sampleStep(logits: Tensor, sequences: Tensor, attnMask: Tensor, positions: Tensor, finished: Tensor, pos: number, params: SampleParams, logprobs: Tensor | null = null): void {
    const { B, V, S } = sampleDims(logits, sequences);
    const stats = this.be.empty([B, 3 * V]); // (B, 3V) f32 [weight | mass before | rank → kept weight]
    const u = {
      B,
      V,
      S,
      pos,
      top_k: params.topK,
      top_p: params.topP,
      temperature: params.temperature,
      seed: params.seed,
      eos: params.eosId,
      pad: params.padId,
      has_logprobs: logprobs ? 1 : 0,
    };
    // Without a logprobs tensor the kernel writes nothing there; a one-element scratch fills the binding.
    const lp = logprobs ?? this.be.empty([1]);
    const bufs = [gpu(logits), gpu(finished), gpu(stats), gpu(sequences), gpu(attnMask), gpu(positions), gpu(lp)];
    if (B > 65535) throw new Error(`sampleStep: ${B} rows exceed one workgroup per row (at most 65535)`);
    this.be.rt.dispatch(SAMPLE_STEP, bufs, u, [B]);
    this.be.dispose(stats, lp === logprobs ? null : lp);
  }

  decodeStep(params: Tensor, model: DecodeModel, kv: Tensor, sequences: Tensor, positions: Tensor, attnMask: Tensor, pos: number): Tensor {
    const { B, Smax, D, H, V, stride } = decodeStepDims(model, sequences);
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
    const logits = this.be.empty([B, V]);
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
      kv_stride: stride,
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
    this.be.rt.dispatch(
      decodeStepKernel({ dModel: D, nHead: H, seqLen: Smax }),
      [gpu(params), gpu(kv), gpu(sequences), gpu(positions), gpu(attnMask), gpu(logits), gpu(params)],
      u,
      [Math.ceil(B / R)],
    );
    return logits;
  }
}
