// float64 reference of one sampling step over a large vocabulary (the oracle for
// shaders/sample_vocab.wgsl): the rule of src/reference/seq/sample.ts — temperature, top-k by
// (z descending, id ascending), top-p on the top-k survivors, inverse CDF in token-id order with
// u = sampleUniform(seed, row, pos), log-prob under the kept distribution — with the order found
// by sorting (O(V log V), where keptProbabilities compares every pair) and several EOS ids (a
// model's generation_config lists them: Qwen3 stops on <|im_end|> or <|endoftext|>).
import { sampleUniform } from '../../util/philox.ts';
import { drawToken } from './sample.ts';

export interface VocabSampleParams {
  temperature: number;
  /** Keep the k most likely tokens; 0 disables. */
  topK: number;
  /** Keep the smallest prefix (in that order) whose mass reaches p; 1 disables. */
  topP: number;
  seed: number;
  /** Any of these ends the row (may be empty). */
  eosIds: readonly number[];
  padId: number;
}

/** keptProbabilities (src/reference/seq/sample.ts) with the order by sorting: the same kept set and probabilities. */
export function keptProbabilitiesSorted(logits: ArrayLike<number>, params: Pick<VocabSampleParams, 'temperature' | 'topK' | 'topP'>): Float64Array {
  const V = logits.length;
  const z = Float64Array.from(logits, (x) => x / params.temperature);
  let m = -Infinity;
  for (let v = 0; v < V; v++) m = Math.max(m, z[v]);
  const w = Float64Array.from(z, (x) => Math.exp(x - m));
  const order = Array.from({ length: V }, (_, v) => v).sort((u, v) => (z[u] !== z[v] ? z[v] - z[u] : u - v));
  const rank = new Int32Array(V);
  order.forEach((v, r) => {
    rank[v] = r;
  });
  const useTopK = params.topK > 0 && params.topK < V;
  const useTopP = params.topP < 1;
  const inTopK = (v: number) => !useTopK || rank[v] < params.topK;
  let zTopK = 0;
  for (let v = 0; v < V; v++) if (inTopK(v)) zTopK += w[v];
  const kept = new Uint8Array(V);
  let before = 0; // mass of the tokens before this one in the order
  for (const v of order) {
    if (!inTopK(v)) break;
    if (rank[v] > 0 && useTopP && !(before / zTopK < params.topP)) break; // the mass before only grows
    kept[v] = 1;
    before += w[v];
  }
  let zKept = 0;
  for (let v = 0; v < V; v++) if (kept[v]) zKept += w[v];
  return Float64Array.from(w, (x, v) => (kept[v] ? x / zKept : 0));
}

/**
 * One step for every row, in place (the contract of SeqOps.sampleStep, with several EOS ids):
 * logits (B, V); sequences, attnMask, positions (B, S); finished (B); logprobs (B, S) or null.
 */
export function sampleVocabStepRef(
  logits: ArrayLike<number>,
  sequences: Float64Array,
  attnMask: Float64Array,
  positions: Float64Array,
  finished: Float64Array,
  dims: { B: number; V: number; S: number },
  pos: number,
  params: VocabSampleParams,
  logprobs: Float64Array | null = null,
): void {
  const { B, V, S } = dims;
  for (let b = 0; b < B; b++) {
    const at = b * S + pos;
    if (finished[b] !== 0) {
      sequences[at] = params.padId;
      attnMask[at] = 0;
      positions[at] = 0;
      if (logprobs) logprobs[at] = 0;
      continue;
    }
    const probs = keptProbabilitiesSorted(Array.prototype.slice.call(logits, b * V, (b + 1) * V) as number[], params);
    const token = drawToken(probs, sampleUniform(params.seed, b, pos));
    if (logprobs) logprobs[at] = Math.log(probs[token]);
    sequences[at] = token;
    attnMask[at] = 1;
    positions[at] = pos > 0 ? positions[at - 1] + 1 : 0;
    if (params.eosIds.includes(token)) finished[b] = 1;
  }
}
