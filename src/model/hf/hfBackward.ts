// The gradient of a loss on response log-probs with respect to an HfModel's LoRA adapters, back
// through the frozen layers (Llama, Qwen2, Qwen3, GPT-2): the forward of scoring.ts with every
// layer's intermediates kept (HfModel.layerForward), then, from the LM head down, each layer's backward:
//   y = h + down(act):       gAct = down'(gy);  (gGate, gUp) = swiglu'(gAct)
//                            gh = gy + postNorm'(gate'(gGate) + up'(gUp))
//                            (GPT-2: gUp = gelu'(gAct), gh = gy + postNorm'(up'(gUp)))
//   h = x + o(attn):         gAttn = o'(gh);  (gQ, gK, gV) = attention'(gAttn)
//                            gQ, gK through rope' and (Qwen3) q_norm', k_norm'
//                            gx = gh + inputNorm'(q'(gQ) + k'(gK) + v'(gV))
// where p'(g) of a projection is g·W (+ its adapter's s·(g·B)·A, accumulating gradA and gradB),
// and a norm' is RMSNorm's or (GPT-2) LayerNorm's. Two ways to train: adapters only (LoRA; the
// weights are frozen and get no gradient), or every weight (full training, f32 weights: each
// projection also adds gradW += gᵀ·x and gradBias += Σ g, each norm its weight's gradient, the
// embedding rows Σ of their rows' gradients, the head's parts theirs; a tied head's gradient lands
// in the embedding's own parts, being the same tensors).
import type { Tensor } from '../../backend/tensor.ts';
import { axpy, geluBackward } from '../../ops/elementwise.ts';
import { layerNormBackward } from '../../ops/layerNorm.ts';
import { gqaAttention, gqaAttentionBackward } from '../../ops/gqaAttention.ts';
import { embeddingRowsBackward } from '../../ops/embeddingRows.ts';
import { linearBackward } from '../../ops/linear.ts';
import { matmulBackward } from '../../ops/matmul.ts';
import { lmHeadLogprobs, lmHeadLogprobsBackward } from '../../ops/lmHead.ts';
import { rmsNormBackward } from '../../ops/rmsNorm.ts';
import { ropeBackward } from '../../ops/rope.ts';
import { sliceSeq, sliceSeqBackward } from '../../ops/slice.ts';
import { swigluBackward } from '../../ops/swiglu.ts';
import type { DeviceLinear, DeviceNorm } from './deviceWeights.ts';
import type { HfModel, LayerTape, TokenBatch } from './hfModel.ts';
import { type LoraTarget, loraLinearBackward, type ModelAdapters } from './lora.ts';
import type { LinearOf, NormOf, WeightsOf } from './weightLayout.ts';
import { batchTensors, packScored, uploadBatch } from './scoring.ts';

/** gradA (r, in) and gradB (out, r) of each adapter, in the adapters' layout. */
export type AdapterGrads = Partial<Record<LoraTarget, { a: Tensor; b: Tensor }>>[];

/** Every weight's gradient, in the weights' own layout (a tied head's parts are the embedding's). */
export type WeightGrads = WeightsOf<Tensor>;

/** Where a backward adds parameter gradients: LoRA adapters', or every weight's (full training). */
type GradSink = { adapters: AdapterGrads; weights: null } | { adapters: null; weights: WeightGrads };

export function zeroAdapterGrads(model: HfModel, adapters: ModelAdapters): AdapterGrads {
  const be = model.be;
  return adapters.layers.map((layer) => {
    const out: Partial<Record<LoraTarget, { a: Tensor; b: Tensor }>> = {};
    for (const [target, ad] of Object.entries(layer) as [LoraTarget, { a: Tensor; b: Tensor }][]) out[target] = { a: be.zeros(ad.a.shape), b: be.zeros(ad.b.shape) };
    return out;
  });
}

/** Everything the backward of one scored batch reads; dispose with disposeTape. */
export interface ResponseTape {
  B: number;
  S: number;
  P: number; // prompts' padded width
  A: number; // responses' padded width
  batch: TokenBatch;
  layers: LayerTape[];
  last: Tensor; // (B·S, D) the last layer's output
  final: { rows: Tensor; rstd: Tensor; mean: Tensor | null }; // final norm of `last`, (B, S, D), its rstd (and LayerNorm's mean)
  scored: Tensor; // (B·A, D) final-normed rows that score each response column (the heads' input)
  targets: Tensor | null; // (B·A) i32, response ids (0 past a response's end); null on a whole-row tape
  /** Whether disposeTape frees the batch's tensors (false when the caller gave them: sequenceTaped). */
  ownsBatch: boolean;
  /** The LM head's (B·A, 4) and temperature, when the tape scored log-probs. */
  head: { saved: Tensor; temperature: number } | null;
}

export interface TapedScores {
  logprobs: Tensor; // (B·A) f32, row-major (B, A); columns past a response's end score token 0 (mask them)
  entropy: Tensor; // (B·A) f32
  tape: ResponseTape;
}

/** Response log-probs as scoring.ts computes them, keeping what backwardToAdapters needs. */
export function responseLogprobsTaped(model: HfModel, prompts: readonly (readonly number[])[], responses: readonly (readonly number[])[], temperature = 1): TapedScores {
  const tape = responseRowsTaped(model, prompts, responses);
  const r = lmHeadLogprobs(model.be, { hidden: tape.scored, head: model.weights.head, tokens: tape.targets, temperature });
  tape.head = { saved: r.saved, temperature };
  return { logprobs: r.logprobs, entropy: r.entropy, tape };
}

/**
 * The final-normed hidden rows that score each response column (tape.scored, (B·A, D)), every
 * layer's intermediates kept: what a value head, or the LM head (responseLogprobsTaped), reads.
 */
export function responseRowsTaped(model: HfModel, prompts: readonly (readonly number[])[], responses: readonly (readonly number[])[]): ResponseTape & { targets: Tensor } {
  const be = model.be;
  const h = packScored(prompts, responses);
  const A = h.S - h.P;
  const batch = uploadBatch(model, h);
  const ids = new Int32Array(h.B * A);
  responses.forEach((r, b) => {
    ids.set(r, b * A);
  });
  const { layers, last, final } = tapeLayers(model, batch);
  const scored = be.reshape(sliceSeq(be, { x: final.rows, start: h.P - 1, len: A }), [h.B * A, model.arch.dModel]);
  const targets = be.tensor(ids, [h.B * A], 'i32');
  return { B: h.B, S: h.S, P: h.P, A, batch, layers, last, final, scored, targets, head: null, ownsBatch: true };
}

/**
 * Every position's final-normed hidden row (tape.scored, (B·S, D)) of a batch already on the
 * device, every layer's intermediates kept: what a head over all positions reads (a critic's values,
 * the logits of the character model's trainer). The batch stays the caller's. As a tape it scores
 * columns [0, S): P = 1, A = S.
 */
export function sequenceTaped(model: HfModel, batch: TokenBatch): ResponseTape {
  const [B, S] = batch.tokens.shape;
  const { layers, last, final } = tapeLayers(model, batch);
  const scored = model.be.view(final.rows, 0, [B * S, model.arch.dModel]);
  return { B, S, P: 1, A: S, batch, layers, last, final, scored, targets: null, head: null, ownsBatch: false };
}

/** The forward of every layer over a batch, each layer's intermediates kept, and the final norm. */
function tapeLayers(model: HfModel, batch: TokenBatch): Pick<ResponseTape, 'layers' | 'last' | 'final'> {
  const be = model.be;
  const a = model.arch;
  const [B, S] = batch.tokens.shape;
  // No scope: every tensor made here is kept in the tape (a scope keeps only two levels of a result).
  const layers: LayerTape[] = [];
  let x = model.embedTokens(batch.tokens, batch.positions);
  for (let l = 0; l < a.nLayer; l++) {
    const t = model.layerForward(x, batch.positions, l, (q, k, v) =>
      gqaAttention(be, { q, k, v, attnMask: batch.attnMask, nHead: a.nHead, nKvHead: a.nKvHead, scale: a.attnScale }),
    );
    layers.push(t);
    x = t.y;
  }
  const fin = model.normed(x, model.weights.finalNorm);
  // reshape hands the storage to the new handle: the tape keeps the handles that own it.
  const rows = be.reshape(fin.y, [B, S, a.dModel]);
  return { layers, last: x, final: { rows, rstd: fin.rstd, mean: fin.mean } };
}

/**
 * Adds ∂L/∂A and ∂L/∂B of every adapter into `grads`, for L with ∂L/∂logprobs = gradLogprobs
 * (B·A) f32 (0 on columns past a response's end) — e.g. PPO's per-token policy-loss gradient.
 */
export function backwardToAdapters(model: HfModel, tape: ResponseTape, gradLogprobs: Tensor, grads: AdapterGrads): void {
  if (!model.loraAdapters) throw new Error('backwardToAdapters: the model has no adapters (setAdapters)');
  backwardFromLogprobs(model, tape, gradLogprobs, { adapters: grads, weights: null });
}

/**
 * Adds ∂L/∂W of every weight into `grads` (full training: f32 weights, no adapters), for L with
 * ∂L/∂logprobs = gradLogprobs (B·A) f32 — e.g. supervised fine-tuning's −1/N on each response token.
 */
export function backwardToWeights(model: HfModel, tape: ResponseTape, gradLogprobs: Tensor, grads: WeightGrads): void {
  if (model.weights.dtype !== 'f32') throw new Error(`backwardToWeights: training every weight needs f32 weights, the model holds ${model.weights.dtype}`);
  if (model.loraAdapters) throw new Error('backwardToWeights: the model has LoRA adapters set; full training takes the weights alone');
  backwardFromLogprobs(model, tape, gradLogprobs, { adapters: null, weights: grads });
}

function backwardFromLogprobs(model: HfModel, tape: ResponseTape, gradLogprobs: Tensor, sink: GradSink): void {
  const be = model.be;
  if (!tape.head) throw new Error('backward: the tape scored no log-probs (responseLogprobsTaped makes one that did)');
  const head = tape.head;
  if (!tape.targets) throw new Error('backward: a whole-row tape scored no response tokens');
  const targets = tape.targets;
  be.scope(() => {
    const gScored = lmHeadLogprobsBackward(be, {
      hidden: tape.scored,
      head: model.weights.head,
      tokens: targets,
      temperature: head.temperature,
      saved: head.saved,
      gradLogprobs,
      gradHead: sink.weights?.head ?? null,
    });
    backwardThroughLayers(model, tape, gScored, sink);
  });
}

/** Adds the adapters' gradients for ∂L/∂scored = gScored (B·A, D), a head's gradient at its input rows (consumed: its storage is freed). */
export function backwardFromRows(model: HfModel, tape: ResponseTape, gScored: Tensor, grads: AdapterGrads): void {
  if (!model.loraAdapters) throw new Error('backwardFromRows: the model has no adapters (setAdapters)');
  backwardThroughLayers(model, tape, gScored, { adapters: grads, weights: null });
}

/** Adds every weight's gradient for ∂L/∂scored = gScored (B·A, D) (full training: f32 weights, no adapters); gScored is consumed. */
export function backwardRowsToWeights(model: HfModel, tape: ResponseTape, gScored: Tensor, grads: WeightGrads): void {
  if (model.weights.dtype !== 'f32') throw new Error(`backwardRowsToWeights: training every weight needs f32 weights, the model holds ${model.weights.dtype}`);
  if (model.loraAdapters) throw new Error('backwardRowsToWeights: the model has LoRA adapters set; full training takes the weights alone');
  backwardThroughLayers(model, tape, gScored, { adapters: null, weights: grads });
}

function backwardThroughLayers(model: HfModel, tape: ResponseTape, gScored: Tensor, sink: GradSink): void {
  const be = model.be;
  const a = model.arch;
  const { B, S, P, A } = tape;
  const D = a.dModel;
  be.scope(() => {
    const gFinal = be.reshape(sliceSeqBackward(be, { grad: be.reshape(gScored, [B, A, D]), seqLen: S, start: P - 1 }), [B * S, D]);
    const normBack = normBackward(model);
    let gy = normBack(gFinal, tape.last, model.weights.finalNorm, tape.final, null, sink.weights?.finalNorm ?? null);
    for (let l = a.nLayer - 1; l >= 0; l--) gy = layerBackward(model, tape, l, gy, sink, normBack);
    if (sink.weights) {
      // the embedding's rows (and GPT-2's position rows) take the gradient at the first layer's input
      const gEmbed = be.reshape(gy, [B, S, D]);
      embeddingRowsBackward(be, { gradOut: gEmbed, tokens: tape.batch.tokens, gradTable: sink.weights.embed });
      if (sink.weights.positions) embeddingRowsBackward(be, { gradOut: gEmbed, tokens: tape.batch.positions, gradTable: [sink.weights.positions] });
    }
  });
}

/**
 * x's gradient through a norm (added into `into` when given); the norm weight's (and LayerNorm
 * bias') gradient added into `grad` when given, else dropped (a frozen norm).
 */
type NormBackward = (gradY: Tensor, x: Tensor, norm: DeviceNorm, saved: { rstd: Tensor; mean: Tensor | null }, into: Tensor | null, grad: NormOf<Tensor> | null) => Tensor;

/** RMSNorm's backward, or LayerNorm's (a frozen one's γ/β gradients go to scratch freed with the caller's scope). */
function normBackward(model: HfModel): NormBackward {
  const be = model.be;
  if (model.arch.norm.kind === 'rms')
    return (gradY, x, norm, saved, into, grad) => rmsNormBackward(be, { gradY, x, weight: norm.w, rstd: saved.rstd, gradWeight: grad?.w ?? null, into });
  const D = model.arch.dModel;
  // made here, in the caller's scope: a layer's inner scope would free it before the next layer
  const scratch = { gamma: be.zeros([D]), beta: be.zeros([D]) };
  return (gradY, x, norm, saved, into, grad) => {
    const gradGamma = grad ? grad.w : scratch.gamma;
    const gradBeta = grad?.b ?? scratch.beta;
    return layerNormBackward(be, { gradY, x, gamma: norm.w, mean: saved.mean!, rstd: saved.rstd, gradGamma, gradBeta, into });
  };
}

/** Adds one layer's parameter gradients; gy (R, D), the gradient at the layer's output, becomes the one at its input (in place). */
function layerBackward(model: HfModel, tape: ResponseTape, layer: number, gy: Tensor, sink: GradSink, normBack: NormBackward): Tensor {
  const be = model.be;
  const a = model.arch;
  const t = tape.layers[layer];
  const L = model.weights.layers[layer];
  const adapters = model.loraAdapters?.layers[layer] ?? {};
  const wg = sink.weights?.layers[layer] ?? null;
  /** g·W of a projection; adds its adapter's gradients (LoRA) or its own (full training). */
  const back = (g: Tensor, lin: DeviceLinear, input: Tensor, target: LoraTarget, gradLin: LinearOf<Tensor> | null): Tensor => {
    if (gradLin) return matmulBackward(be, { gradOut: g, a: input, b: lin.w, transB: true, gradB: gradLin.w, gradBias: gradLin.b, needGradA: true })!;
    const adapter = adapters[target];
    const grad = sink.adapters?.[layer][target];
    if (!adapter || !grad) return linearBackward(be, { gradY: g, weight: lin.w });
    return loraLinearBackward(be, { gradY: g, x: input, weight: lin.w, adapter, scaledDown: t.scaledDown[target]!, gradA: grad.a, gradB: grad.b });
  };
  const sum = (parts: Tensor[]): Tensor => {
    for (const p of parts.slice(1)) axpy(be, { alpha: 1, x: p, y: parts[0] });
    return parts[0];
  };
  return be.scope(() => {
    // MLP: y = h + down(swiglu(gate(n2), up(n2))), or GPT-2's h + down(gelu(up(n2))); n2 = postNorm(h)
    const gAct = back(gy, L.down, t.act, 'down_proj', wg?.down ?? null);
    let gN2: Tensor;
    if (t.gate && L.gate) {
      const { gradGate, gradUp } = swigluBackward(be, { gradY: gAct, gate: t.gate, up: t.up });
      gN2 = sum([back(gradGate, L.gate, t.n2.y, 'gate_proj', wg?.gate ?? null), back(gradUp, L.up, t.n2.y, 'up_proj', wg?.up ?? null)]);
    } else {
      gN2 = back(geluBackward(be, { gradY: gAct, x: t.up }), L.up, t.n2.y, 'up_proj', wg?.up ?? null);
    }
    normBack(gN2, t.h, L.postNorm, t.n2, gy, wg?.postNorm ?? null);
    // attention: h = x + o(attention(q, k, v)), q, k through norm and rope, n1 = inputNorm(x)
    const gAttn = back(gy, L.o, t.attn, 'o_proj', wg?.o ?? null);
    const g = gqaAttentionBackward(be, {
      q: t.q,
      k: t.k,
      v: t.v,
      attnMask: tape.batch.attnMask,
      nHead: a.nHead,
      nKvHead: a.nKvHead,
      scale: a.attnScale,
      gradOut: gAttn,
      out: t.attn,
      lse: t.lse!,
    });
    let gQ = g.gradQ;
    let gK = g.gradK;
    const frequencies = model.ropeTable;
    if (frequencies) {
      gQ = ropeBackward(be, { gradY: gQ, positions: tape.batch.positions, frequencies });
      gK = ropeBackward(be, { gradY: gK, positions: tape.batch.positions, frequencies });
    }
    if (t.qNormed && L.qNorm) gQ = rmsNormBackward(be, { gradY: gQ, x: t.qLin, weight: L.qNorm, rstd: t.qNormed.rstd, gradWeight: wg?.qNorm ?? null });
    if (t.kNormed && L.kNorm) gK = rmsNormBackward(be, { gradY: gK, x: t.kLin, weight: L.kNorm, rstd: t.kNormed.rstd, gradWeight: wg?.kNorm ?? null });
    const gN1 = sum([back(gQ, L.q, t.n1.y, 'q_proj', wg?.q ?? null), back(gK, L.k, t.n1.y, 'k_proj', wg?.k ?? null), back(g.gradV, L.v, t.n1.y, 'v_proj', wg?.v ?? null)]);
    normBack(gN1, t.x, L.inputNorm, t.n1, gy, wg?.inputNorm ?? null);
    return gy;
  });
}

/** Frees a tape (the batch's tensors included when it made them). */
export function disposeTape(model: HfModel, tape: ResponseTape): void {
  const be = model.be;
  const layerTensors = (t: LayerTape): (Tensor | null)[] => [
    t.n1.y,
    t.n1.rstd,
    t.n1.mean,
    t.qLin,
    t.kLin,
    t.qNormed?.y ?? null,
    t.qNormed?.rstd ?? null,
    t.kNormed?.y ?? null,
    t.kNormed?.rstd ?? null,
    t.q,
    t.k,
    t.v,
    t.attn,
    t.lse,
    t.h,
    t.n2.y,
    t.n2.rstd,
    t.n2.mean,
    t.gate,
    t.up,
    t.act,
    t.y,
    ...Object.values(t.scaledDown),
  ];
  // Each layer's input is the previous layer's y (the first one's, the embedding).
  const all = new Set([
    tape.layers[0]?.x,
    ...tape.layers.flatMap(layerTensors),
    tape.final.rows,
    tape.final.rstd,
    tape.final.mean,
    tape.scored,
    tape.targets,
    tape.head?.saved,
    ...(tape.ownsBatch ? batchTensors(tape.batch) : []),
  ]);
  be.dispose(...all);
}
