// One transformer block (pre-LN GPT-2, no dropout) written once, for training (full causal
// attention, activations kept for backward: src/model/gpt.ts) and for generation (KV-cached
// attention, activations dropped at once: src/model/generate.ts). R rows of width D:
//   mid = x + c_proj(attn(c_attn(ln_1(x))))        c_attn (D,3D)+bias, c_proj (D,D)+bias
//   y   = mid + mlp.c_proj(gelu(mlp.c_fc(ln_2(mid))))   c_fc (D,4D)+bias, c_proj (4D,D)+bias
// Each residual add is fused into its projection (nn.matmulResidual), GELU into c_fc (nn.matmulGelu).
import type { Backend } from '../backend/backend.ts';
import type { Tensor } from '../backend/tensor.ts';
import { LN_EPS, type GptConfig } from './config.ts';
import { geluBackward } from '../ops/elementwise.ts';
import { layerNorm, layerNormBackward } from '../ops/layerNorm.ts';
import { matmul, matmulBackward, matmulGelu, matmulResidual } from '../ops/matmul.ts';
import { attentionBackward } from '../ops/attention.ts';

/** A dense layer's weight (in, out) and bias (out), or a layer norm's gain and bias (D). */
export interface Affine {
  w: Tensor;
  b: Tensor;
}

/** One block's parameters (or their gradients: the same views into the flat gradient buffer). */
export interface BlockParams {
  ln1: Affine;
  /** attn.c_attn: (D, 3D), (3D). */
  cAttn: Affine;
  /** attn.c_proj: (D, D), (D). */
  attnProj: Affine;
  ln2: Affine;
  /** mlp.c_fc: (D, 4D), (4D). */
  fc: Affine;
  /** mlp.c_proj: (4D, D), (D). */
  mlpProj: Affine;
}

/** Every parameter of a model, typed (or every gradient). */
export interface GptParams {
  wte: Tensor; // (V, D)
  wpe: Tensor; // (P, D)
  blocks: BlockParams[];
  lnf: Affine;
  /** value_head / reward_head: (1, D), (1); null for the lm head (tied to wte). */
  head: Affine | null;
}

/** Builds the typed struct from the checkpoint names (Hugging Face GPT-2 names, src/model/params.ts). */
export function gptParams(cfg: GptConfig, byName: (name: string) => Tensor, headPrefix: string | null): GptParams {
  const affine = (n: string, w = 'weight', b = 'bias'): Affine => ({ w: byName(`${n}.${w}`), b: byName(`${n}.${b}`) });
  return {
    wte: byName('wte.weight'),
    wpe: byName('wpe.weight'),
    blocks: Array.from({ length: cfg.nLayer }, (_, l) => ({
      ln1: affine(`h.${l}.ln_1`),
      cAttn: affine(`h.${l}.attn.c_attn`),
      attnProj: affine(`h.${l}.attn.c_proj`),
      ln2: affine(`h.${l}.ln_2`),
      fc: affine(`h.${l}.mlp.c_fc`),
      mlpProj: affine(`h.${l}.mlp.c_proj`),
    })),
    lnf: affine('ln_f'),
    head: headPrefix ? affine(headPrefix) : null,
  };
}

export interface LnActs {
  y: Tensor; // (R, D)
  mean: Tensor; // (R)
  rstd: Tensor; // (R)
}

/** What backward needs of one block's forward pass. */
export interface BlockActs {
  ln1: LnActs;
  qkv: Tensor; // (R, 3D)
  /** (B, H, S, S) attention probabilities; null for cached attention (no backward). */
  probs: Tensor | null;
  att: Tensor; // (R, D) attention output before c_proj
  mid: Tensor; // (R, D) residual stream after attention
  ln2: LnActs;
  fc: Tensor; // (R, 4D) pre-GELU
  act: Tensor; // (R, 4D) post-GELU
}

/** Attention of a block: qkv (R, 3D) → out (R, D), with the probabilities when backward needs them. */
export type Attend = (qkv: Tensor) => { out: Tensor; probs: Tensor | null };

/** One block: x (R, D) → y (R, D) and its activations (owned by the caller; x is not consumed). */
export function block(be: Backend, p: BlockParams, x: Tensor, attend: Attend): { y: Tensor; acts: BlockActs } {
  const ln1 = layerNorm(be, { x, gamma: p.ln1.w, beta: p.ln1.b, eps: LN_EPS });
  const qkv = matmul(be, { a: ln1.y, b: p.cAttn.w, bias: p.cAttn.b }); // (R, 3D)
  const { out: att, probs } = attend(qkv); // (R, D)
  const mid = matmulResidual(be, { a: att, b: p.attnProj.w, bias: p.attnProj.b, residual: x }); // x + c_proj(att), (R, D)
  const ln2 = layerNorm(be, { x: mid, gamma: p.ln2.w, beta: p.ln2.b, eps: LN_EPS });
  const { pre: fc, act } = matmulGelu(be, { a: ln2.y, b: p.fc.w, bias: p.fc.b }); // (R, 4D) each: pre-GELU, post-GELU
  const y = matmulResidual(be, { a: act, b: p.mlpProj.w, bias: p.mlpProj.b, residual: mid }); // mid + mlp, (R, D)
  return { y, acts: { ln1, qkv, probs, att, mid, ln2, fc, act } };
}

export function disposeBlockActs(be: Backend, a: BlockActs): void {
  be.dispose(a.ln1.y, a.ln1.mean, a.ln1.rstd, a.qkv, a.probs, a.att, a.mid, a.ln2.y, a.ln2.mean, a.ln2.rstd, a.fc, a.act);
}

/**
 * Backward of one block: gX (R, D) holds the gradient wrt y on entry and wrt x on return (updated
 * in place); parameter gradients are accumulated into `g`. Disposes the activations except x.
 */
export function blockBackward(be: Backend, p: BlockParams, g: BlockParams, a: BlockActs, x: Tensor, gX: Tensor, nHead: number): void {
  if (!a.probs) throw new Error('blockBackward: these activations came from cached attention (no probabilities kept)');
  // MLP branch; gX (residual gradient) flows to `mid` unchanged and gets the branch added.
  const gAct = matmulBackward(be, { gradOut: gX, a: a.act, b: p.mlpProj.w, gradB: g.mlpProj.w, gradBias: g.mlpProj.b, needGradA: true })!;
  const gFc = geluBackward(be, { gradY: gAct, x: a.fc });
  be.dispose(gAct, a.act, a.fc);
  const gLn2 = matmulBackward(be, { gradOut: gFc, a: a.ln2.y, b: p.fc.w, gradB: g.fc.w, gradBias: g.fc.b, needGradA: true })!;
  be.dispose(gFc, a.ln2.y);
  layerNormBackward(be, { gradY: gLn2, x: a.mid, gamma: p.ln2.w, mean: a.ln2.mean, rstd: a.ln2.rstd, gradGamma: g.ln2.w, gradBeta: g.ln2.b, into: gX }); // gX += ∂/∂mid
  be.dispose(gLn2, a.ln2.mean, a.ln2.rstd, a.mid);
  // Attention branch.
  const gAtt = matmulBackward(be, { gradOut: gX, a: a.att, b: p.attnProj.w, gradB: g.attnProj.w, gradBias: g.attnProj.b, needGradA: true })!;
  const gQkv = attentionBackward(be, { gradOut: gAtt, qkv: a.qkv, probs: a.probs, out: a.att, nHead });
  be.dispose(gAtt, a.probs, a.att);
  const gLn1 = matmulBackward(be, { gradOut: gQkv, a: a.ln1.y, b: p.cAttn.w, gradB: g.cAttn.w, gradBias: g.cAttn.b, needGradA: true })!;
  be.dispose(gQkv, a.qkv, a.ln1.y);
  layerNormBackward(be, { gradY: gLn1, x, gamma: p.ln1.w, mean: a.ln1.mean, rstd: a.ln1.rstd, gradGamma: g.ln1.w, gradBeta: g.ln1.b, into: gX }); // gX += ∂/∂x
  be.dispose(gLn1, a.ln1.mean, a.ln1.rstd);
}
