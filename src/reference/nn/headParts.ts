// float64 reference of the chunked LM head (src/reference/nn/chunkedLogprobs.ts) over a head
// stored as row parts W = [W_0; W_1; …] (a table larger than one GPU storage binding is split by
// rows): each part's online-softmax statistics are merged exactly as the vocabulary chunks are,
//   lse = logsumexp_p lse_p,  z̄ = Σ_p e^(lse_p − lse)·z̄_p,  logp = z_tok − lse,  H = lse − z̄,
// so the result equals chunkedLogprobsRef over the concatenated head to float64 rounding. The
// backward is per (token, vocabulary entry) given the global lse and z̄, so it splits by part.
import { type ChunkedLogprobsOut, type ChunkSizes, chunkedLogprobsBackwardRef, chunkedLogprobsRef } from './chunkedLogprobs.ts';

/** One row part of the head: `rows` rows of D values, row-major. */
export interface HeadPartData {
  data: ArrayLike<number>;
  rows: number;
}

/** tokens − v0: a part scores the ids in [v0, v0 + rows) as its local rows (others match none). */
const shifted = (tokens: ArrayLike<number>, v0: number) => Float64Array.from(tokens, (t) => t - v0);

export function headPartsLogprobsRef(
  hidden: ArrayLike<number>, // (N, D)
  parts: readonly HeadPartData[],
  tokens: ArrayLike<number>, // (N) ids in [0, Σ rows)
  N: number,
  D: number,
  T: number,
  chunks: ChunkSizes,
): ChunkedLogprobsOut {
  if (parts.length === 1) return chunkedLogprobsRef(hidden, parts[0].data, tokens, N, D, parts[0].rows, T, chunks);
  const per: ChunkedLogprobsOut[] = [];
  const zTok = new Float64Array(N);
  let v0 = 0;
  for (const p of parts) {
    const r = chunkedLogprobsRef(hidden, p.data, shifted(tokens, v0), N, D, p.rows, T, chunks);
    for (let n = 0; n < N; n++) if (tokens[n] >= v0 && tokens[n] < v0 + p.rows) zTok[n] = r.logprobs[n] + r.lse[n];
    per.push(r);
    v0 += p.rows;
  }
  const out: ChunkedLogprobsOut = { logprobs: new Float64Array(N), entropy: new Float64Array(N), lse: new Float64Array(N), meanZ: new Float64Array(N) };
  for (let n = 0; n < N; n++) {
    const m = Math.max(...per.map((r) => r.lse[n]));
    let sum = 0;
    for (const r of per) sum += Math.exp(r.lse[n] - m);
    const lse = m + Math.log(sum);
    let meanZ = 0;
    for (const r of per) meanZ += Math.exp(r.lse[n] - lse) * r.meanZ[n];
    out.lse[n] = lse;
    out.meanZ[n] = meanZ;
    out.logprobs[n] = zTok[n] - lse;
    out.entropy[n] = lse - meanZ;
  }
  return out;
}

/** Gradients wrt hidden (N, D) and each part (rows, D) of Σ gradLogprobs·logprobs + Σ gradEntropy·entropy. */
export function headPartsBackwardRef(
  hidden: ArrayLike<number>,
  parts: readonly HeadPartData[],
  tokens: ArrayLike<number>,
  saved: Pick<ChunkedLogprobsOut, 'lse' | 'meanZ'>,
  gradLogprobs: ArrayLike<number>, // (N)
  gradEntropy: ArrayLike<number> | null, // (N)
  N: number,
  D: number,
  T: number,
  chunks: ChunkSizes,
): { gradHidden: Float64Array; gradParts: Float64Array[] } {
  const gradHidden = new Float64Array(N * D);
  const gradParts: Float64Array[] = [];
  let v0 = 0;
  for (const p of parts) {
    const g = chunkedLogprobsBackwardRef(hidden, p.data, shifted(tokens, v0), saved, gradLogprobs, gradEntropy, N, D, p.rows, T, chunks);
    for (let i = 0; i < N * D; i++) gradHidden[i] += g.gradHidden[i];
    gradParts.push(g.gradHead);
    v0 += p.rows;
  }
  return { gradHidden, gradParts };
}
