// float64 reference of one sampling step (the oracle for shaders/sample.wgsl).
// Per row: z = logits / T; top-k keeps the k largest z (ties: lower token id first); top-p then
// keeps, in that same order, the smallest prefix whose probability mass (softmax over the top-k
// survivors) reaches p, always at least the first token; the token is drawn by inverse CDF over
// the kept tokens in token-id order with u = sampleUniform(seed, row, pos). The drawn token's
// log-probability under that kept, renormalised distribution is what the rollout engine's
// log-prob (π_rollout, "three policies") is.
import { sampleUniform } from '../../util/philox.ts';

export interface SampleParams {
  temperature: number;
  /** Keep the k most likely tokens; 0 disables. */
  topK: number;
  /** Keep the smallest set of tokens whose probability mass reaches p; 1 disables. */
  topP: number;
  /** Seed of the counter-based generator: the draw for (seed, row, position) is fixed. */
  seed: number;
  eosId: number;
  padId: number;
}

/** Whether token u comes before token v in the (z descending, id ascending) order. */
const precedes = (z: ArrayLike<number>, u: number, v: number) => z[u] > z[v] || (z[u] === z[v] && u < v);

/** Probabilities (V) of the distribution actually sampled from: zero for filtered tokens. */
export function keptProbabilities(logits: ArrayLike<number>, params: Pick<SampleParams, 'temperature' | 'topK' | 'topP'>): Float64Array {
  const V = logits.length;
  const z = Float64Array.from(logits, (x) => x / params.temperature);
  let m = -Infinity;
  for (let v = 0; v < V; v++) m = Math.max(m, z[v]);
  const w = Float64Array.from(z, (x) => Math.exp(x - m));
  const useTopK = params.topK > 0 && params.topK < V;
  const useTopP = params.topP < 1;
  const rank = new Int32Array(V);
  const expBefore = new Float64Array(V);
  for (let v = 0; v < V; v++) {
    for (let u = 0; u < V; u++) {
      if (u !== v && precedes(z, u, v)) {
        rank[v]++;
        expBefore[v] += w[u];
      }
    }
  }
  const inTopK = (v: number) => !useTopK || rank[v] < params.topK;
  let zTopK = 0;
  for (let v = 0; v < V; v++) if (inTopK(v)) zTopK += w[v];
  const kept = (v: number) => inTopK(v) && (!useTopP || rank[v] === 0 || expBefore[v] / zTopK < params.topP);
  let zKept = 0;
  for (let v = 0; v < V; v++) if (kept(v)) zKept += w[v];
  return Float64Array.from(w, (x, v) => (kept(v) ? x / zKept : 0));
}

/** Inverse CDF in token-id order: the first token whose cumulative probability exceeds u. */
export function drawToken(probs: ArrayLike<number>, u: number): number {
  let cum = 0;
  let last = 0;
  for (let v = 0; v < probs.length; v++) {
    if (probs[v] <= 0) continue;
    cum += probs[v];
    last = v;
    if (cum > u) return v;
  }
  return last; // rounding left u at or above the total: the last kept token
}

/**
 * One step for every row, in place (the sampleStep op's contract): logits (B,V); sequences,
 * attnMask, positions (B,S); finished (B); logprobs (B,S) or null: log p(token) under the kept
 * distribution, 0 for rows already finished.
 */
export function sampleStepRef(
  logits: ArrayLike<number>,
  sequences: Float64Array,
  attnMask: Float64Array,
  positions: Float64Array,
  finished: Float64Array,
  dims: { B: number; V: number; S: number },
  pos: number,
  params: SampleParams,
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
    const row = Array.prototype.slice.call(logits, b * V, (b + 1) * V) as number[];
    const probs = keptProbabilities(row, params);
    const token = drawToken(probs, sampleUniform(params.seed, b, pos));
    if (logprobs) logprobs[at] = Math.log(probs[token]);
    sequences[at] = token;
    attnMask[at] = 1;
    positions[at] = pos > 0 ? positions[at - 1] + 1 : 0;
    if (token === params.eosId) finished[b] = 1;
  }
}
