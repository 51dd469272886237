// Preference pairs → one left-padded batch of 2N whole sequences [BOS, prompt, response, EOS]:
// rows 0..N−1 are the chosen responses, rows N..2N−1 the rejected ones, so a single forward pass
// scores both sides. Left padding puts every row's EOS in the last column, which is where the
// reward head reads (the same token a PPO rollout's score is read at).
import type { PreferencePair } from '../../tasks/task.ts';
import { leftPadBatch, type CharTokenizer } from '../../model/tokenizer.ts';

export interface PairBatch {
  /** Pairs N; the batch has 2N rows. */
  N: number;
  S: number;
  tokens: Int32Array; // (2N, S)
  attnMask: Float32Array; // (2N, S)
  positions: Int32Array; // (2N, S)
  /** Column of each row's EOS (2N): always S − 1 with left padding. */
  scoreAt: Int32Array;
}

export function encodePairs(tok: CharTokenizer, pairs: readonly PreferencePair[], maxSeq: number): PairBatch {
  const N = pairs.length;
  if (N === 0) throw new Error('encodePairs: no pairs');
  const seq = (prompt: string, response: string) => [...tok.encodePrompt(prompt), ...tok.encode(response), tok.eosId];
  const rows = [...pairs.map((p) => seq(p.prompt, p.chosen)), ...pairs.map((p) => seq(p.prompt, p.rejected))];
  const padded = leftPadBatch(rows);
  const S = padded.width;
  if (S > maxSeq) throw new Error(`encodePairs: a sequence of ${S} tokens exceeds the reward model's maxSeq ${maxSeq}`);
  return {
    N,
    S,
    tokens: Int32Array.from(padded.tokens),
    attnMask: Float32Array.from(padded.attnMask),
    positions: Int32Array.from(padded.positions),
    scoreAt: new Int32Array(2 * N).fill(S - 1),
  };
}
