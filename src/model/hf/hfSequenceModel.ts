// An HfModel as a SequenceModel: the LM head over every final-normed hidden row, or a value head
// (a critic's) over the same rows. The vocabulary is materialised whole, (B, S, V): this serves
// small vocabularies (the character model's); a large one is scored row by row (scoring.ts).
import type { Tensor } from '../../backend/tensor.ts';
import type { SequenceModel } from '../sequenceModel.ts';
import type { HfModel } from './hfModel.ts';
import { type ValueHead, valueHeadForward } from './valueHead.ts';

/** logits (B, S, V) of every position. */
export function hfLanguageModel(model: HfModel): SequenceModel {
  const be = model.be;
  return {
    be,
    head: 'lm',
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
