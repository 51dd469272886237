// The character model's KV-cached decoding, what generate() samples from: the left-padded prompts
// in one prefill pass (attentionCached with start 0), then one position per step through the whole
// model in one fused decodeStep (vec4 weights: a width not a multiple of 4 takes the per-op chain).
// All layers' caches live in one tensor so the fused step binds them once: layer l's k (B, S, D) at
// 2l·stride, its v at (2l+1)·stride; the prefill works on views of it.
import type { Tensor } from '../backend/tensor.ts';
import { attentionCached } from '../ops/attentionCached.ts';
import { decodeStep } from '../ops/decodeStep.ts';
import { embeddingWindow } from '../ops/embedding.ts';
import { layerNorm } from '../ops/layerNorm.ts';
import { matmul } from '../ops/matmul.ts';
import { sliceSeq } from '../ops/slice.ts';
import { type DecodeModel, kvStride } from '../reference/seq/decode.ts';
import type { Backend } from '../backend/backend.ts';
import { block, type GptParams } from './block.ts';
import { type GptConfig, LN_EPS } from './config.ts';
import type { ParamLayout } from './params.ts';
import type { Decoder } from './sequenceModel.ts';

/** What decoding reads of a Gpt: its sizes, its flat parameters and their typed views. */
export interface DecodingGpt {
  readonly be: Backend;
  readonly cfg: GptConfig;
  readonly layout: ParamLayout;
  readonly params: Tensor; // (layout.total) f32
  readonly weights: GptParams;
}

/** A decoder over the rollout's buffers sequences (B, S) i32, attnMask (B, S) f32, positions (B, S) i32. */
export function gptDecoder(model: DecodingGpt, sequences: Tensor, attnMask: Tensor, positions: Tensor): Decoder {
  const { be, cfg } = model;
  const [B, S] = sequences.shape;
  const D = cfg.dModel;
  const W = model.weights;
  const stride = kvStride(B, S, D);
  const kvAll = be.zeros([2 * cfg.nLayer * stride]);
  const kv = Array.from({ length: cfg.nLayer }, (_, l) => ({ k: be.view(kvAll, 2 * l * stride, [B, S, D]), v: be.view(kvAll, (2 * l + 1) * stride, [B, S, D]) })); // (B, S, D) each
  const dm = decodeModel(model);
  /** Columns [start, start + L) through the blocks (caching their keys and values), then the logits (B, V) of the last. */
  const chain = (start: number, L: number): Tensor => {
    const x = embeddingWindow(be, { tokens: sequences, positions, start, len: L, wte: W.wte, wpe: W.wpe }); // (B·L, D)
    const h = cachedTrunk(model, x, kv, attnMask, start); // (B·L, D)
    const last = L > 1 ? sliceSeq(be, { x: be.view(h, 0, [B, L, D]), start: L - 1, len: 1 }) : h; // (B, 1, D)
    const logits = matmul(be, { a: be.view(last, 0, [B, D]), b: W.wte, transB: true }); // (B, V)
    be.dispose(h, last === h ? null : last);
    return logits;
  };
  return {
    prefill: (P) => chain(0, P),
    step: (p) => (D % 4 === 0 ? decodeStep(be, { params: model.params, model: dm, kv: kvAll, sequences, positions, attnMask, pos: p }) : chain(p, 1)),
    dispose: () => be.dispose(kvAll),
  };
}

/** The model's sizes and parameter offsets for seq.decodeStep. */
export function decodeModel(model: DecodingGpt): DecodeModel {
  const { cfg, layout } = model;
  const at = (name: string) => layout.byName.get(name)!.offset;
  const blocks = Array.from({ length: cfg.nLayer }, (_, l) => {
    const b = (n: string) => at(`h.${l}.${n}`);
    return {
      ln1G: b('ln_1.weight'),
      ln1B: b('ln_1.bias'),
      attnW: b('attn.c_attn.weight'),
      attnB: b('attn.c_attn.bias'),
      projW: b('attn.c_proj.weight'),
      projB: b('attn.c_proj.bias'),
      ln2G: b('ln_2.weight'),
      ln2B: b('ln_2.bias'),
      fcW: b('mlp.c_fc.weight'),
      fcB: b('mlp.c_fc.bias'),
      mlpW: b('mlp.c_proj.weight'),
      mlpB: b('mlp.c_proj.bias'),
    };
  });
  return {
    nLayer: cfg.nLayer,
    nHead: cfg.nHead,
    dModel: cfg.dModel,
    vocabSize: cfg.vocabSize,
    maxPos: cfg.maxSeq,
    eps: LN_EPS,
    wte: at('wte.weight'),
    wpe: at('wpe.weight'),
    lnfG: at('ln_f.weight'),
    lnfB: at('ln_f.bias'),
    blocks,
  };
}

/**
 * Runs L new positions [start, start+L) of each row through every block with the KV cache and
 * returns ln_f of the last block (B·L, D). Consumes (disposes) x, given as (B·L, D) or (B, L, D).
 */
function cachedTrunk(model: DecodingGpt, xIn: Tensor, kv: { k: Tensor; v: Tensor }[], attnMask: Tensor, start: number): Tensor {
  const { be, cfg } = model;
  const rows = xIn.size / cfg.dModel;
  let x = be.view(xIn, 0, [rows, cfg.dModel]);
  let owned: Tensor = xIn; // the base of x, disposed once the next residual exists
  const W = model.weights;
  for (let l = 0; l < cfg.nLayer; l++) {
    // The block training uses, with the KV cache's attention: k, v of the new positions are written
    // into kv[l] and their queries attend to every cached key up to their position.
    const attend = (qkv: Tensor) => ({ out: attentionCached(be, { qkv, kCache: kv[l].k, vCache: kv[l].v, attnMask, start, nHead: cfg.nHead }), probs: null }); // (rows, D)
    const y = be.scope(() => block(be, W.blocks[l], x, attend).y); // the block's activations are dropped
    be.dispose(owned);
    x = y;
    owned = y;
  }
  const lnf = layerNorm(be, { x, gamma: W.lnf.w, beta: W.lnf.b, eps: LN_EPS });
  be.dispose(lnf.mean, lnf.rstd, owned);
  return lnf.y;
}
