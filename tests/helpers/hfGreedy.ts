// The float64 oracle's greedy continuation of a prompt, for the tests of generation (the model's
// and `npm run generate`'s): full recompute at every step, argmax, stop at an EOS id, and stop at a
// near tie, where an f32 model may rightly pick the other token.
import { hfForwardRef, type RefArch, type RefWeights } from '../../src/reference/hf/forward.ts';

/** Top-two logit gap below which the continuation is not compared further. */
export const NEAR_TIE = 1e-3;

/** The oracle's greedy continuation of one prompt, stopping at an EOS id or at a near tie (returned as `tied`). */
export function referenceGreedy(arch: RefArch, w: RefWeights, prompt: number[], maxNew: number, eos: readonly number[]): { tokens: number[]; tiedAt: number | null } {
  const ids = [...prompt];
  const tokens: number[] = [];
  for (let n = 0; n < maxNew; n++) {
    const S = ids.length;
    const { logits } = hfForwardRef(
      arch,
      w,
      ids,
      new Float64Array(S).fill(1),
      Int32Array.from({ length: S }, (_, i) => i),
      1,
      S,
    );
    const row = logits.subarray((S - 1) * arch.vocab, S * arch.vocab);
    let best = 0;
    for (let v = 1; v < arch.vocab; v++) if (row[v] > row[best]) best = v;
    let second = -Infinity;
    for (let v = 0; v < arch.vocab; v++) if (v !== best) second = Math.max(second, row[v]);
    if (row[best] - second < NEAR_TIE) return { tokens, tiedAt: n };
    tokens.push(best);
    ids.push(best);
    if (eos.includes(best)) break;
  }
  return { tokens, tiedAt: null };
}
