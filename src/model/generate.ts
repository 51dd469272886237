// Autoregressive sampling with a KV cache, entirely on the device: the left-padded prompts are
// prefilled in one pass (seq.attentionCached with start 0), then one position per step goes
// through the whole model in one seq.decodeStep and seq.sampleStep writes the next token, mask
// and position in place.
// Nothing is read back per token; rows that drew EOS keep writing PAD through their finished flag.
import { kvStride, type DecodeModel } from '../reference/seq/decode.ts';
import type { SampleParams } from '../reference/seq/sample.ts';
import type { Tensor } from '../backend/tensor.ts';
import { block } from './block.ts';
import { LN_EPS } from './config.ts';
import type { Gpt } from './gpt.ts';
import { embeddingWindow } from '../ops/embedding.ts';
import { layerNorm } from '../ops/layerNorm.ts';
import { matmul } from '../ops/matmul.ts';
import { sliceSeq } from '../ops/slice.ts';
import { attentionCached } from '../ops/attentionCached.ts';
import { decodeStep } from '../ops/decodeStep.ts';
import { sampleStep } from '../ops/sampleStep.ts';

export interface PromptBatch {
  /** Left-padded prompts, row-major host arrays of B·P values. */
  tokens: ArrayLike<number>;
  attnMask: ArrayLike<number>;
  /** cumsum(mask) − 1, padding 0. */
  positions: ArrayLike<number>;
  B: number;
  P: number;
}

/** Device tensors of a finished rollout; the caller reads them back once and disposes them. */
export interface Rollout {
  B: number;
  P: number;
  A: number;
  sequences: Tensor; // (B, P+A) i32: prompt | response (EOS, then PAD)
  attnMask: Tensor; // (B, P+A) f32
  positions: Tensor; // (B, P+A) i32
  actionMask: Tensor; // (B, A) f32: the response part of attnMask (first EOS included, PAD after)
  finished: Tensor; // (B) i32: 1 where the row drew EOS
  /**
   * (B, A) f32: log-probability of each sampled token under the distribution actually sampled from
   * (temperature, top-k, top-p renormalisation) — π_rollout; 0 after the response ended.
   */
  logprobs: Tensor;
}

/**
 * Samples `maxNew` response tokens for every prompt with the lm model. Returns device tensors
 * after recording all work (no readback, no await).
 */
export function generate(model: Gpt, prompts: PromptBatch, maxNew: number, params: SampleParams): Rollout {
  const { be, cfg } = model;
  if (cfg.head !== 'lm') throw new Error(`generate needs an lm head, got ${cfg.head}`);
  const { B, P } = prompts;
  const A = maxNew;
  const S = P + A;
  if (P < 1 || A < 1) throw new Error(`generate: need prompt length ≥ 1 and maxNew ≥ 1 (got ${P}, ${A})`);
  if (S > cfg.maxSeq) throw new Error(`generate: prompt ${P} + response ${A} exceeds maxSeq ${cfg.maxSeq}`);
  for (const [name, arr] of [
    ['tokens', prompts.tokens],
    ['attnMask', prompts.attnMask],
    ['positions', prompts.positions],
  ] as const) {
    if (arr.length !== B * P) throw new Error(`generate: prompt ${name} has ${arr.length} values, expected ${B * P}`);
  }
  const D = cfg.dModel;

  // Response columns start as PAD / mask 0 / position 0: exactly what finished rows would write.
  const seqHost = new Int32Array(B * S).fill(params.padId);
  const maskHost = new Float32Array(B * S);
  const posHost = new Int32Array(B * S);
  for (let b = 0; b < B; b++) {
    for (let t = 0; t < P; t++) {
      seqHost[b * S + t] = prompts.tokens[b * P + t];
      maskHost[b * S + t] = prompts.attnMask[b * P + t];
      posHost[b * S + t] = prompts.positions[b * P + t];
    }
  }
  const sequences = be.tensor(seqHost, [B, S], 'i32');
  const attnMask = be.tensor(maskHost, [B, S]);
  const positions = be.tensor(posHost, [B, S], 'i32');
  const finished = be.zeros([B], 'i32');
  const logprobsFull = be.zeros([B, S]); // (B, S) f32: sampler log-probs, response columns filled

  // All caches in one tensor so the fused decode step binds them once: layer l's k (B, S, D) at
  // 2l·stride, its v at (2l+1)·stride; the prefill works on views of it.
  const stride = kvStride(B, S, D);
  const kvAll = be.zeros([2 * cfg.nLayer * stride]);
  const kv = Array.from({ length: cfg.nLayer }, (_, l) => ({ k: be.view(kvAll, 2 * l * stride, [B, S, D]), v: be.view(kvAll, (2 * l + 1) * stride, [B, S, D]) })); // (B, S, D) each

  // Prefill: all prompt positions at once (the prompt columns of the sequences, uploaded once),
  // logits from the last prompt column.
  const x0 = embeddingWindow(be, { tokens: sequences, positions, start: 0, len: P, wte: model.weights.wte, wpe: model.weights.wpe }); // (B·P, D)
  const h = cachedTrunk(model, x0, kv, attnMask, 0); // (B·P, D)
  sampleFrom(model, h, B, P, sequences, attnMask, positions, finished, logprobsFull, P, params);

  // Decode: the token written at column p goes through the blocks and samples column p + 1.
  // One fused dispatch per token (embedding → blocks → ln_f → head), then the sampler. The WebGPU
  // kernel reads weights as vec4, so a width that is not a multiple of 4 takes the per-op chain.
  const dm = decodeModel(model);
  for (let p = P; p < S - 1; p++) {
    if (D % 4 === 0) {
      const logits = decodeStep(be, { params: model.params, model: dm, kv: kvAll, sequences, positions, attnMask, pos: p }); // (B, V)
      sampleStep(be, { logits, sequences, attnMask, positions, finished, pos: p + 1, params, logprobs: logprobsFull });
      be.dispose(logits);
    } else {
      const col = embeddingWindow(be, { tokens: sequences, positions, start: p, len: 1, wte: model.weights.wte, wpe: model.weights.wpe }); // (B, D)
      const hp = cachedTrunk(model, col, kv, attnMask, p); // (B, D)
      sampleFrom(model, hp, B, 1, sequences, attnMask, positions, finished, logprobsFull, p + 1, params);
    }
  }
  be.dispose(kvAll);
  const actionMask = sliceSeq(be, { x: attnMask, start: P, len: A }); // (B, A)
  const logprobs = sliceSeq(be, { x: logprobsFull, start: P, len: A }); // (B, A)
  be.dispose(logprobsFull);
  return { B, P, A, sequences, attnMask, positions, actionMask, finished, logprobs };
}

export function disposeRollout(model: Gpt, r: Rollout): void {
  model.be.dispose(r.sequences, r.attnMask, r.positions, r.actionMask, r.finished, r.logprobs);
}

/** The model's sizes and parameter offsets for seq.decodeStep. */
export function decodeModel(model: Gpt): DecodeModel {
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
function cachedTrunk(model: Gpt, xIn: Tensor, kv: { k: Tensor; v: Tensor }[], attnMask: Tensor, start: number): Tensor {
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

/** Logits of the last of L positions per row → one sampleStep writing column `pos`. Consumes h. */
function sampleFrom(
  model: Gpt,
  h: Tensor,
  B: number,
  L: number,
  sequences: Tensor,
  attnMask: Tensor,
  positions: Tensor,
  finished: Tensor,
  logprobs: Tensor, // (B, S) f32, column `pos` written
  pos: number,
  params: SampleParams,
): void {
  const { be, cfg } = model;
  let last = h;
  if (L > 1) last = sliceSeq(be, { x: be.view(h, 0, [B, L, cfg.dModel]), start: L - 1, len: 1 }); // (B, 1, D)
  const logits = matmul(be, { a: be.view(last, 0, [B, cfg.dModel]), b: model.weights.wte, transB: true }); // (B, V)
  sampleStep(be, { logits, sequences, attnMask, positions, finished, pos, params, logprobs });
  be.dispose(logits, h, last === h ? null : last);
}
