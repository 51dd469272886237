// One transformer block (pre-LN GPT-2, no dropout) written once, for training (full causal
// attention, activations kept for backward: src/model/gpt.ts) and for generation (KV-cached
// attention, activations dropped at once: src/model/generate.ts). R rows of width D:
//   mid = x + c_proj(attn(c_attn(ln_1(x))))        c_attn (D,3D)+bias, c_proj (D,D)+bias
//   y   = mid + mlp.c_proj(gelu(mlp.c_fc(ln_2(mid))))   c_fc (D,4D)+bias, c_proj (4D,D)+bias
// Each residual add is fused into its projection (nn.matmulResidual), GELU into c_fc (nn.matmulGelu).
import type { Backend } from '../backend/backend.ts';
import type { Tensor } from '../backend/tensor.ts';
import { LN_EPS, type GptConfig } from './config.ts';

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
  const { nn } = be;
  const ln1 = nn.layerNorm(x, p.ln1.w, p.ln1.b, LN_EPS);
  const qkv = nn.matmul(ln1.y, p.cAttn.w, p.cAttn.b, false); // (R, 3D)
  const { out: att, probs } = attend(qkv); // (R, D)
  const mid = nn.matmulResidual(att, p.attnProj.w, p.attnProj.b, false, x); // x + c_proj(att), (R, D)
  const ln2 = nn.layerNorm(mid, p.ln2.w, p.ln2.b, LN_EPS);
  const { pre: fc, act } = nn.matmulGelu(ln2.y, p.fc.w, p.fc.b, false); // (R, 4D) each: pre-GELU, post-GELU
  const y = nn.matmulResidual(act, p.mlpProj.w, p.mlpProj.b, false, mid); // mid + mlp, (R, D)
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
  const { nn } = be;
  if (!a.probs) throw new Error('blockBackward: these activations came from cached attention (no probabilities kept)');
  // MLP branch; gX (residual gradient) flows to `mid` unchanged and gets the branch added.
  const gAct = nn.matmulBackward(gX, a.act, p.mlpProj.w, false, g.mlpProj.w, g.mlpProj.b, true)!;
  const gFc = nn.geluBackward(gAct, a.fc);
  be.dispose(gAct, a.act, a.fc);
  const gLn2 = nn.matmulBackward(gFc, a.ln2.y, p.fc.w, false, g.fc.w, g.fc.b, true)!;
  be.dispose(gFc, a.ln2.y);
  nn.layerNormBackward(gLn2, a.mid, p.ln2.w, a.ln2.mean, a.ln2.rstd, g.ln2.w, g.ln2.b, gX); // gX += ∂/∂mid
  be.dispose(gLn2, a.ln2.mean, a.ln2.rstd, a.mid);
  // Attention branch.
  const gAtt = nn.matmulBackward(gX, a.att, p.attnProj.w, false, g.attnProj.w, g.attnProj.b, true)!;
  const gQkv = be.seq.attentionBackward(gAtt, a.qkv, a.probs, a.att, nHead);
  be.dispose(gAtt, a.probs, a.att);
  const gLn1 = nn.matmulBackward(gQkv, a.ln1.y, p.cAttn.w, false, g.cAttn.w, g.cAttn.b, true)!;
  be.dispose(gQkv, a.qkv, a.ln1.y);
  nn.layerNormBackward(gLn1, x, p.ln1.w, a.ln1.mean, a.ln1.rstd, g.ln1.w, g.ln1.b, gX); // gX += ∂/∂x
  be.dispose(gLn1, a.ln1.mean, a.ln1.rstd);
}
