// What the trainer's stages ask of a causal model, whatever its family: the outputs at every
// position of a batch of token rows (experience), their gradients (update, SFT), device snapshots
// (the NaN guard), next-token logits through a KV cache (sampling), and a reward head's scores at one
// position per row (the learned reward model). The playground's character
// model (Gpt) is one family; a Hugging Face folder on HfModel (src/model/hf/hfSequenceModel.ts) is
// another, and the character model on HfModel, as the GPT-2 it is (src/model/hf/charFamily.ts),
// computes the same numbers as Gpt.
import type { Backend } from '../backend/backend.ts';
import type { Tensor } from '../backend/tensor.ts';
import type { GptConfig, HeadKind } from './config.ts';
import type { AdamWParams } from '../reference/nn/optim.ts';

/** A causal model read at every position: an LM's logits (B, S, V), a critic's values (B, S). */
export interface SequenceModel {
  readonly be: Backend;
  /** 'lm': infer gives logits (B, S, V); 'value': values (B, S). ('reward' is Gpt's scorer, read at one position per row.) */
  readonly head: HeadKind;
  /**
   * tokens (B, S) i32 · attnMask (B, S) f32, 1 = real token · positions (B, S) i32, cumsum(mask) − 1.
   * The output at position t reads tokens [0, t] of its row; the caller owns it.
   */
  infer(tokens: Tensor, attnMask: Tensor, positions: Tensor): Tensor;
}

/**
 * A SequenceModel the update trains: forward keeps what backward reads (`Cache`, the family's own),
 * backward adds every parameter's gradient for ∂L/∂out = gradOut (the forward output's shape) and
 * consumes the cache, optimizerStep takes one AdamW step and returns the pre-clip gradient norm (1).
 */
export interface TrainableSequenceModel<Cache> extends SequenceModel {
  zeroGrad(): void;
  forward(tokens: Tensor, attnMask: Tensor, positions: Tensor): { out: Tensor; cache: Cache };
  backward(cache: Cache, gradOut: Tensor): void;
  optimizerStep(hp: Omit<AdamWParams, 'step'>): Tensor;
}

/** Device copies of a trainable model's parameters and AdamW moments (each its family's flat layout), and its step count. */
export interface ModelSnapshot {
  params: Tensor;
  m: Tensor;
  v: Tensor;
  steps: number;
}

/** A trainable model the trainer can put back to an earlier point without a readback (its NaN guard). */
export interface SnapshotModel {
  /** Device copies into `into` (allocated when null, of this model's sizes); no readback. */
  snapshotInto(into: ModelSnapshot | null): ModelSnapshot;
  restoreSnapshot(s: ModelSnapshot): void;
}

/**
 * The next-token logits of a batch being sampled, with the family's own KV cache, over the
 * rollout's buffers: sequences (B, S) i32, attnMask (B, S) f32, positions (B, S) i32, the prompt
 * columns filled, each later column written by the sampler before the step that reads it.
 */
export interface Decoder {
  /** logits (B, V) of the last prompt column, after columns [0, P) went through the model. */
  prefill(P: number): Tensor;
  /** logits (B, V) after column p (the token just sampled there) went through the model. */
  step(p: number): Tensor;
  /** Frees the KV cache. */
  dispose(): void;
}

/** A model with the LM head that generate() samples from. */
export interface SamplingModel extends SequenceModel {
  /** Positions the model reads (prompt + response). */
  readonly maxPositions: number;
  decoder(sequences: Tensor, attnMask: Tensor, positions: Tensor): Decoder;
}

/**
 * A trained character model's own state, whatever its family: its config, AdamW over its flat
 * parameters, and that state read in the character model's parameter layout (paramLayout(cfg):
 * what saved states and checkpoints hold).
 */
export interface CharModelState {
  readonly be: Backend;
  /** The character model's config these parameters are (vocabulary, layers, heads, width, positions, head). */
  readonly cfg: GptConfig;
  zeroGrad(): void;
  optimizerStep(hp: Omit<AdamWParams, 'step'>): Tensor;
  /** The parameters and AdamW moments on the device, in the family's own flat layout (for the caller's one readback). */
  stateTensors(): { params: Tensor; m: Tensor; v: Tensor };
  /** A host copy of one of stateTensors' buffers, in paramLayout(cfg)'s order. */
  toGptLayout(flat: ArrayLike<number>): Float64Array;
  dispose(): void;
}

/**
 * The learned reward model's view of a model with the scalar reward head (cfg.head 'reward'), read at
 * one position per row (its last real token): scores (B). Forward keeps what backward reads, backward
 * adds every parameter's gradient for ∂L/∂scores = gradOut (B) and consumes the cache, release frees a
 * cache not back-propagated. Saved as a checkpoint like a TrainerModel.
 */
export interface RewardTrainable extends CharModelState {
  forward(tokens: Tensor, attnMask: Tensor, positions: Tensor, opts: { scoreAt: ArrayLike<number> }): { out: Tensor; cache: unknown };
  backward(cache: unknown, gradOut: Tensor): void;
  release(cache: unknown): void;
  /** Scores (B) without keeping a cache; the caller owns them. */
  infer(tokens: Tensor, attnMask: Tensor, positions: Tensor, opts: { scoreAt: ArrayLike<number> }): Tensor;
}

/**
 * What the PPO trainer holds of a role (actor, reference, critic), whatever its family: it samples,
 * is read and trained, snapshots on the device, and its state travels in the character model's
 * parameter layout.
 */
export interface TrainerModel extends TrainableSequenceModel<unknown>, SamplingModel, SnapshotModel, CharModelState {
  /** AdamW steps taken (bias correction is 1-based). */
  steps: number;
  /** Parameters, moments and step count given in paramLayout(cfg)'s order (host values the caller checked). */
  setState(params: ArrayLike<number>, m: ArrayLike<number>, v: ArrayLike<number>, steps: number): void;
}
