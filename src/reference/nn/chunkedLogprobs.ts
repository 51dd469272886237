// float64 reference of the LM head fused with temperature log-softmax, gather and entropy, over a
// large vocabulary without ever holding the (N, V) logits: tokens go in chunks of `tokenChunk`, the
// vocabulary in chunks of `vocabChunk`, and each token keeps a running (max m, Σe, Σe·(z − m)) —
// the online softmax — rescaled whenever a later chunk raises the max:
//   z = h·Wᵀ/T  (h (N, D) hidden states, W (V, D) head rows)
//   m' = max(m, max_chunk z);  α = e^(m − m');  Σe ← α·Σe;  Σez ← α·(Σez + (m − m')·Σe);
//   then for every z of the chunk: Σe += e^(z − m'), Σez += e^(z − m')·(z − m')
//   lse = m + log Σe;  logp(token) = z_token − lse;  entropy = log Σe − Σez/Σe
// Backward (the same chunks, from the saved lse and mean z̄ = Σ p·z = m + Σez/Σe):
//   ∂/∂z_v = gLogp·(1[v = token] − p_v) − gEnt·p_v·(z_v − z̄),   p_v = e^(z_v − lse)
//   dh += (∂/∂z)·W/T,   dW += (∂/∂z)ᵀ·h/T
// Equal (to rounding) to logprobsRef ∘ matmul over the whole (N, V) logits; the kernels follow the same plan.

export interface ChunkSizes {
  tokenChunk: number;
  vocabChunk: number;
}

export interface ChunkedLogprobsOut {
  logprobs: Float64Array; // (N)
  entropy: Float64Array; // (N)
  /** logsumexp of z per token (N), kept for backward. */
  lse: Float64Array;
  /** Σ_v p_v·z_v per token (N), kept for backward. */
  meanZ: Float64Array;
}

function checkChunks(c: ChunkSizes): void {
  for (const [k, v] of Object.entries(c)) if (!Number.isInteger(v) || v < 1) throw new Error(`${k} must be a positive integer, got ${v}`);
}

/** z block (n1 − n0, v1 − v0) = hidden[n0:n1]·head[v0:v1]ᵀ / T. */
function logitsBlock(hidden: ArrayLike<number>, head: ArrayLike<number>, D: number, T: number, n0: number, n1: number, v0: number, v1: number, out: Float64Array): void {
  const w = v1 - v0;
  for (let n = n0; n < n1; n++) {
    for (let v = v0; v < v1; v++) {
      let s = 0;
      for (let d = 0; d < D; d++) s += hidden[n * D + d] * head[v * D + d];
      out[(n - n0) * w + (v - v0)] = s / T;
    }
  }
}

export function chunkedLogprobsRef(
  hidden: ArrayLike<number>, // (N, D)
  head: ArrayLike<number>, // (V, D)
  tokens: ArrayLike<number>, // (N) target ids in [0, V)
  N: number,
  D: number,
  V: number,
  T: number,
  chunks: ChunkSizes,
): ChunkedLogprobsOut {
  checkChunks(chunks);
  const { tokenChunk, vocabChunk } = chunks;
  const logprobs = new Float64Array(N);
  const entropy = new Float64Array(N);
  const lse = new Float64Array(N);
  const meanZ = new Float64Array(N);
  const block = new Float64Array(tokenChunk * vocabChunk);
  for (let n0 = 0; n0 < N; n0 += tokenChunk) {
    const n1 = Math.min(N, n0 + tokenChunk);
    const m = new Float64Array(n1 - n0).fill(-Infinity);
    const se = new Float64Array(n1 - n0);
    const sez = new Float64Array(n1 - n0);
    const zTok = new Float64Array(n1 - n0);
    for (let v0 = 0; v0 < V; v0 += vocabChunk) {
      const v1 = Math.min(V, v0 + vocabChunk);
      const w = v1 - v0;
      logitsBlock(hidden, head, D, T, n0, n1, v0, v1, block);
      for (let i = 0; i < n1 - n0; i++) {
        let mb = -Infinity;
        for (let j = 0; j < w; j++) mb = Math.max(mb, block[i * w + j]);
        const mNew = Math.max(m[i], mb);
        if (m[i] !== -Infinity && mNew > m[i]) {
          const alpha = Math.exp(m[i] - mNew);
          sez[i] = alpha * (sez[i] + (m[i] - mNew) * se[i]);
          se[i] *= alpha;
        }
        m[i] = mNew;
        for (let j = 0; j < w; j++) {
          const dz = block[i * w + j] - mNew;
          const e = Math.exp(dz);
          se[i] += e;
          sez[i] += e * dz;
        }
        const tok = tokens[n0 + i];
        if (tok >= v0 && tok < v1) zTok[i] = block[i * w + (tok - v0)];
      }
    }
    for (let i = 0; i < n1 - n0; i++) {
      const n = n0 + i;
      const logS = Math.log(se[i]);
      lse[n] = m[i] + logS;
      logprobs[n] = zTok[i] - lse[n];
      entropy[n] = logS - sez[i] / se[i];
      meanZ[n] = m[i] + sez[i] / se[i];
    }
  }
  return { logprobs, entropy, lse, meanZ };
}

/** Gradients of Σ gradLogprobs·logprobs + Σ gradEntropy·entropy wrt hidden (N, D) and head (V, D). */
export function chunkedLogprobsBackwardRef(
  hidden: ArrayLike<number>,
  head: ArrayLike<number>,
  tokens: ArrayLike<number>,
  saved: Pick<ChunkedLogprobsOut, 'lse' | 'meanZ'>,
  gradLogprobs: ArrayLike<number>, // (N)
  gradEntropy: ArrayLike<number> | null, // (N)
  N: number,
  D: number,
  V: number,
  T: number,
  chunks: ChunkSizes,
): { gradHidden: Float64Array; gradHead: Float64Array } {
  checkChunks(chunks);
  const { tokenChunk, vocabChunk } = chunks;
  const gradHidden = new Float64Array(N * D);
  const gradHead = new Float64Array(V * D);
  const block = new Float64Array(tokenChunk * vocabChunk);
  for (let n0 = 0; n0 < N; n0 += tokenChunk) {
    const n1 = Math.min(N, n0 + tokenChunk);
    for (let v0 = 0; v0 < V; v0 += vocabChunk) {
      const v1 = Math.min(V, v0 + vocabChunk);
      const w = v1 - v0;
      logitsBlock(hidden, head, D, T, n0, n1, v0, v1, block);
      for (let i = 0; i < n1 - n0; i++) {
        const n = n0 + i;
        const gl = gradLogprobs[n];
        const ge = gradEntropy ? gradEntropy[n] : 0;
        for (let j = 0; j < w; j++) {
          const z = block[i * w + j];
          const p = Math.exp(z - saved.lse[n]);
          const dz = gl * ((tokens[n] === v0 + j ? 1 : 0) - p) - ge * p * (z - saved.meanZ[n]);
          if (dz === 0) continue;
          const g = dz / T;
          const v = v0 + j;
          for (let d = 0; d < D; d++) {
            gradHidden[n * D + d] += g * head[v * D + d];
            gradHead[v * D + d] += g * hidden[n * D + d];
          }
        }
      }
    }
  }
  return { gradHidden, gradHead };
}
