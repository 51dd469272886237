// The PPO work of one iteration written the way an ordinary TF.js user would write it: tf ops,
// `optimizer.minimize`, `tf.multinomial`, no custom kernels. Same architecture as src/model/gpt.ts
// (GPT-2 style: token + learned position embeddings, pre-LN blocks, causal multi-head attention,
// tanh-GELU MLP, final LN, LM head tied to wte; the critic is the same trunk + a scalar value head),
// and the same initial weights (copied from the project's freshly initialised actor and critic).
// This module only takes `tf`: the caller picks and initialises the backend.
import type * as TF from '@tensorflow/tfjs';
import type { BenchConfig } from '../model.ts';

type Tf = typeof TF;
type T = TF.Tensor;

/** The benchmark configuration's shape (S or M), without its name. */
export type PeerShape = Omit<BenchConfig, 'name'>;

/** Token lookup: `gather` (the ordinary way) or `onehot` (oneHot·wte, for backends without the gather gradient). */
export type EmbedMode = 'gather' | 'onehot';

interface BlockParams {
  ln1g: TF.Variable; // (D)
  ln1b: TF.Variable; // (D)
  wqkv: TF.Variable; // (D, 3D)
  bqkv: TF.Variable; // (3D)
  wproj: TF.Variable; // (D, D)
  bproj: TF.Variable; // (D)
  ln2g: TF.Variable; // (D)
  ln2b: TF.Variable; // (D)
  wfc: TF.Variable; // (D, 4D)
  bfc: TF.Variable; // (4D)
  wout: TF.Variable; // (4D, D)
  bout: TF.Variable; // (D)
}

export interface PeerModel {
  wte: TF.Variable; // (V, D)
  wpe: TF.Variable; // (S, D)
  blocks: BlockParams[];
  lnfg: TF.Variable; // (D)
  lnfb: TF.Variable; // (D)
  /** Value head (D, 1) and (1); null for the actor. */
  vw: TF.Variable | null;
  vb: TF.Variable | null;
  vars: TF.Variable[];
}

/**
 * Variables holding the given parameters (host copies of the project's model, by the project's
 * names: src/model/params.ts), so both implementations start from the same weights and their
 * first-step losses can be compared.
 */
export function createModel(tf: Tf, s: PeerShape, params: Map<string, Float64Array>, withValueHead: boolean): PeerModel {
  const D = s.dModel;
  const S = s.prompt + s.response;
  const vars: TF.Variable[] = [];
  const v = (name: string, shape: number[]): TF.Variable => {
    const host = params.get(name);
    if (!host) throw new Error(`peer model: no parameter ${name}`);
    const n = shape.reduce((a, b) => a * b, 1);
    if (host.length !== n) throw new Error(`peer model: ${name} has ${host.length} values, expected ${n}`);
    const x = tf.variable(tf.tensor(Float32Array.from(host), shape));
    vars.push(x);
    return x;
  };
  const blocks: BlockParams[] = [];
  for (let l = 0; l < s.nLayer; l++) {
    const h = `h.${l}`;
    blocks.push({
      ln1g: v(`${h}.ln_1.weight`, [D]),
      ln1b: v(`${h}.ln_1.bias`, [D]),
      wqkv: v(`${h}.attn.c_attn.weight`, [D, 3 * D]),
      bqkv: v(`${h}.attn.c_attn.bias`, [3 * D]),
      wproj: v(`${h}.attn.c_proj.weight`, [D, D]),
      bproj: v(`${h}.attn.c_proj.bias`, [D]),
      ln2g: v(`${h}.ln_2.weight`, [D]),
      ln2b: v(`${h}.ln_2.bias`, [D]),
      wfc: v(`${h}.mlp.c_fc.weight`, [D, 4 * D]),
      bfc: v(`${h}.mlp.c_fc.bias`, [4 * D]),
      wout: v(`${h}.mlp.c_proj.weight`, [4 * D, D]),
      bout: v(`${h}.mlp.c_proj.bias`, [D]),
    });
  }
  return {
    wte: v('wte.weight', [s.vocab, D]),
    wpe: v('wpe.weight', [S, D]),
    blocks,
    lnfg: v('ln_f.weight', [D]),
    lnfb: v('ln_f.bias', [D]),
    // The project's value head is (1, D) used transposed: the same numbers as a (D, 1) matrix.
    vw: withValueHead ? v('value_head.weight', [D, 1]) : null,
    vb: withValueHead ? v('value_head.bias', [1]) : null,
    vars,
  };
}

function layerNorm(tf: Tf, x: T, g: T, b: T): T {
  const { mean, variance } = tf.moments(x, -1, true);
  return x
    .sub(mean)
    .mul(tf.rsqrt(variance.add(1e-5)))
    .mul(g)
    .add(b);
}

function gelu(tf: Tf, x: T): T {
  const inner = x.add(x.pow(3).mul(0.044715)).mul(Math.sqrt(2 / Math.PI));
  return x.mul(0.5).mul(tf.tanh(inner).add(1));
}

/** Trunk: tokens (B, n) int32 → ln_f output (B·n, D), full causal attention over the n positions. */
export function trunk(tf: Tf, m: PeerModel, s: PeerShape, tokens: T, embed: EmbedMode): T {
  const [B, n] = tokens.shape;
  const D = s.dModel;
  const H = s.nHead;
  const hd = D / H;
  const flat = tokens.reshape([B * n]);
  const tok = embed === 'gather' ? tf.gather(m.wte, flat) : tf.oneHot(flat, s.vocab).matMul(m.wte); // (B·n, D)
  let x = tok
    .reshape([B, n, D])
    .add(m.wpe.slice([0, 0], [n, D]))
    .reshape([B * n, D]);
  // −1e9 above the diagonal: softmax gives those keys weight 0.
  const causalBias = tf
    .scalar(1)
    .sub(tf.linalg.bandPart(tf.ones([n, n]), -1, 0))
    .mul(-1e9); // (n, n)
  for (const p of m.blocks) {
    const h = layerNorm(tf, x, p.ln1g, p.ln1b);
    const qkv = h.matMul(p.wqkv).add(p.bqkv); // (B·n, 3D)
    const heads = (i: number) =>
      qkv
        .slice([0, i * D], [B * n, D])
        .reshape([B, n, H, hd])
        .transpose([0, 2, 1, 3]); // (B, H, n, hd)
    const scores = tf
      .matMul(heads(0), heads(1), false, true)
      .mul(1 / Math.sqrt(hd))
      .add(causalBias); // (B, H, n, n)
    const y = tf
      .matMul(tf.softmax(scores), heads(2))
      .transpose([0, 2, 1, 3])
      .reshape([B * n, D]);
    x = x.add(y.matMul(p.wproj).add(p.bproj));
    const h2 = layerNorm(tf, x, p.ln2g, p.ln2b);
    x = x.add(gelu(tf, h2.matMul(p.wfc).add(p.bfc)).matMul(p.wout).add(p.bout));
  }
  return layerNorm(tf, x, m.lnfg, m.lnfb);
}

/** What the PPO update reads: host-generated, uploaded once. */
export interface PeerBatch {
  sequences: T; // (B, S) int32
  actions: T; // (B, A) int32 = sequences[:, P:]
  mask: T; // (B, A) f32
  oldLogprobs: T; // (B, A)
  advantages: T; // (B, A)
  oldValues: T; // (B, A)
  returns: T; // (B, A)
}

export const CLIP = 0.2;
export const VALUE_CLIP = 0.2;
export const ENTROPY_COEF = 0.01;

/** Clipped surrogate − 0.01·entropy, token-mean over the mask (the project's vanilla loss with entropy). */
export function actorLoss(tf: Tf, m: PeerModel, s: PeerShape, b: PeerBatch, embed: EmbedMode): TF.Scalar {
  const { batch: B, prompt: P, response: A, vocab: V } = s;
  const S = P + A;
  const h = trunk(tf, m, s, b.sequences, embed);
  const logits = h.matMul(m.wte, false, true).reshape([B, S, V]);
  const logpAll = tf.logSoftmax(logits.slice([0, P - 1, 0], [B, A, V])); // (B, A, V): position t predicts token t+1
  const logp = logpAll.mul(tf.oneHot(b.actions, V)).sum(-1); // (B, A)
  const entropy = tf.exp(logpAll).mul(logpAll).sum(-1).neg();
  const ratio = tf.exp(logp.sub(b.oldLogprobs));
  const surr = tf.maximum(
    ratio.mul(b.advantages).neg(),
    tf
      .clipByValue(ratio, 1 - CLIP, 1 + CLIP)
      .mul(b.advantages)
      .neg(),
  );
  const n = b.mask.sum();
  return surr.mul(b.mask).sum().div(n).sub(entropy.mul(b.mask).sum().div(n).mul(ENTROPY_COEF)) as TF.Scalar;
}

/** ½·max((v−R)², (clip(v, v_old ± 0.2) − R)²), token-mean over the mask. */
export function criticLoss(tf: Tf, m: PeerModel, s: PeerShape, b: PeerBatch, embed: EmbedMode): TF.Scalar {
  const { batch: B, prompt: P, response: A } = s;
  const S = P + A;
  const h = trunk(tf, m, s, b.sequences, embed);
  const values = h
    .matMul(m.vw!)
    .add(m.vb!)
    .reshape([B, S])
    .slice([0, P - 1], [B, A]);
  const clipped = b.oldValues.add(tf.clipByValue(values.sub(b.oldValues), -VALUE_CLIP, VALUE_CLIP));
  const err = tf.maximum(values.sub(b.returns).square(), clipped.sub(b.returns).square());
  return err.mul(b.mask).sum().div(b.mask.sum()).mul(0.5) as TF.Scalar;
}

/** One PPO update: actor and critic each forward → loss → backward → Adam; resolves with both losses. */
export async function updateStep(
  tf: Tf,
  actor: PeerModel,
  critic: PeerModel,
  actorOpt: TF.Optimizer,
  criticOpt: TF.Optimizer,
  s: PeerShape,
  b: PeerBatch,
  embed: EmbedMode,
): Promise<[number, number]> {
  const la = actorOpt.minimize(() => actorLoss(tf, actor, s, b, embed), true, actor.vars)!;
  const lc = criticOpt.minimize(() => criticLoss(tf, critic, s, b, embed), true, critic.vars)!;
  const [a, c] = await Promise.all([la.data(), lc.data()]);
  la.dispose();
  lc.dispose();
  return [a[0], c[0]];
}

/**
 * Samples `response` tokens for prompts (B, P) int32 at temperature 1, recomputing the whole prefix
 * every token (no KV cache — what tf ops give without writing one); tokens read back once at the end.
 */
export async function rollout(tf: Tf, actor: PeerModel, s: PeerShape, prompts: T, embed: EmbedMode, seed: number): Promise<Int32Array> {
  const B = s.batch;
  const D = s.dModel;
  let seq = prompts.clone();
  for (let t = 0; t < s.response; t++) {
    const next = tf.tidy(() => {
      const n = seq.shape[1]!;
      const last = trunk(tf, actor, s, seq, embed)
        .reshape([B, n, D])
        .slice([0, n - 1, 0], [B, 1, D])
        .reshape([B, D]);
      const logits = last.matMul(actor.wte, false, true) as TF.Tensor2D; // (B, V)
      return tf.concat([seq, tf.multinomial(logits, 1, seed + t).toInt()], 1);
    });
    seq.dispose();
    seq = next;
  }
  const out = (await seq.data()) as Int32Array;
  seq.dispose();
  return out;
}

/** Matmul FLOPs of one update step (fwd + 2× fwd for bwd, both models), as ../shared/bench-peer/README.md counts them. */
export function flopsPerUpdate(s: PeerShape): number {
  const { nLayer: L, dModel: D, vocab: V, batch: B } = s;
  const S = s.prompt + s.response;
  return 3 * B * (2 * L * (24 * S * D * D + 4 * S * S * D) + 2 * S * D * V + 2 * S * D);
}

/** Matmul FLOPs of one rollout without a KV cache (prefix recomputed each token). */
export function flopsPerRollout(s: PeerShape): number {
  const { nLayer: L, dModel: D, vocab: V, batch: B } = s;
  let f = 0;
  for (let t = 0; t < s.response; t++) {
    const n = s.prompt + t;
    f += B * (L * (24 * n * D * D + 4 * n * n * D) + 2 * D * V);
  }
  return f;
}
