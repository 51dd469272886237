// An HfModel as a SequenceModel: the LM head over every final-normed hidden row, or a value head
// (a critic's) over the same rows. The vocabulary is materialised whole, (B, S, V): this serves
// small vocabularies (the character model's); a large one is scored row by row (scoring.ts).
// With the LM head it is a SamplingModel too: its Decoder runs HfModel's KV cache (extend).
import type { Tensor } from '../../backend/tensor.ts';
import { sliceSeq } from '../../ops/slice.ts';
import type { Decoder, SamplingModel, SequenceModel } from '../sequenceModel.ts';
import type { HfModel } from './hfModel.ts';
import { type ValueHead, valueHeadForward } from './valueHead.ts';

/** logits (B, S, V) of every position; sampled through HfModel's KV cache. */
export function hfLanguageModel(model: HfModel): SamplingModel {
  const be = model.be;
  return {
    be,
    head: 'lm',
    maxPositions: model.arch.maxPositions,
    decoder: (sequences: Tensor, attnMask: Tensor, positions: Tensor) => hfDecoder(model, sequences, attnMask, positions),
    infer: (tokens: Tensor, attnMask: Tensor, positions: Tensor) =>
      be.scope(() => {
        const [B, S] = tokens.shape;
        const hidden = model.hidden({ tokens, attnMask, positions }); // (B·S, D)
        return be.reshape(model.logits(hidden), [B, S, model.vocab]); // (B·S, V) → (B, S, V)
      }),
  };
}

/** values (B, S) of every position: v = h·wᵀ + b on the final-normed hidden rows. */
export function hfValueModel(model: HfModel, head: ValueHead): SequenceModel {
  const be = model.be;
  return {
    be,
    head: 'value',
    infer: (tokens: Tensor, attnMask: Tensor, positions: Tensor) =>
      be.scope(() => {
        const [B, S] = tokens.shape;
        const hidden = model.hidden({ tokens, attnMask, positions }); // (B·S, D)
        return be.reshape(valueHeadForward(be, head, hidden), [B, S]); // (B·S) → (B, S)
      }),
  };
}

/** HfModel's decoding over the rollout's buffers (B, S): columns [start, start + L) through extend, the logits (B, V) of the last. */
function hfDecoder(model: HfModel, sequences: Tensor, attnMask: Tensor, positions: Tensor): Decoder {
  const be = model.be;
  const [B, S] = sequences.shape;
  const cache = model.newCache(B, S);
  const run = (start: number, L: number): Tensor =>
    be.scope(() => {
      const tokens = sliceSeq(be, { x: sequences, start, len: L }); // (B, L) i32
      const pos = sliceSeq(be, { x: positions, start, len: L }); // (B, L) i32
      return model.logits(model.extend(cache, tokens, pos, attnMask, start)); // (B, D) → (B, V)
    });
  return { prefill: (P) => run(0, P), step: (p) => run(p, 1), dispose: () => model.disposeCache(cache) };
}
