// Autoregressive sampling with a KV cache, entirely on the device: the model's Decoder (its
// family's own cache: gptDecoder.ts for the character model) prefills the left-padded prompts in
// one pass and then runs one position per step, and seq.sampleStep writes the next token, mask,
// position and log-prob in place.
// Nothing is read back per token; rows that drew EOS keep writing PAD through their finished flag.
import type { Backend } from '../backend/backend.ts';
import type { Tensor } from '../backend/tensor.ts';
import { sampleStep } from '../ops/sampleStep.ts';
import { sliceSeq } from '../ops/slice.ts';
import type { SampleParams } from '../reference/seq/sample.ts';
import type { SamplingModel } from './sequenceModel.ts';

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
export function generate(model: SamplingModel, prompts: PromptBatch, maxNew: number, params: SampleParams): Rollout {
  const { be } = model;
  if (model.head !== 'lm') throw new Error(`generate needs an lm head, got ${model.head}`);
  const { B, P } = prompts;
  const A = maxNew;
  const S = P + A;
  if (P < 1 || A < 1) throw new Error(`generate: need prompt length ≥ 1 and maxNew ≥ 1 (got ${P}, ${A})`);
  if (S > model.maxPositions) throw new Error(`generate: prompt ${P} + response ${A} exceeds maxSeq ${model.maxPositions}`);
  for (const [name, arr] of [
    ['tokens', prompts.tokens],
    ['attnMask', prompts.attnMask],
    ['positions', prompts.positions],
  ] as const) {
    if (arr.length !== B * P) throw new Error(`generate: prompt ${name} has ${arr.length} values, expected ${B * P}`);
  }

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

  /** One sampleStep from logits (B, V), writing column `pos`; consumes the logits. */
  const sample = (logits: Tensor, pos: number) => {
    sampleStep(be, { logits, sequences, attnMask, positions, finished, pos, params, logprobs: logprobsFull });
    be.dispose(logits);
  };
  // Prefill: all prompt positions at once, the first response column sampled from the last one's
  // logits; then the token written at column p goes through the model and samples column p + 1.
  const decoder = model.decoder(sequences, attnMask, positions);
  try {
    sample(decoder.prefill(P), P);
    for (let p = P; p < S - 1; p++) sample(decoder.step(p), p + 1);
  } finally {
    decoder.dispose();
  }
  const actionMask = sliceSeq(be, { x: attnMask, start: P, len: A }); // (B, A)
  const logprobs = sliceSeq(be, { x: logprobsFull, start: P, len: A }); // (B, A)
  be.dispose(logprobsFull);
  return { B, P, A, sequences, attnMask, positions, actionMask, finished, logprobs };
}

export function disposeRollout(model: { be: Backend }, r: Rollout): void {
  model.be.dispose(r.sequences, r.attnMask, r.positions, r.actionMask, r.finished, r.logprobs);
}
