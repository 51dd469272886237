// float64 reference: grouped-query causal self-attention over left-padded batches, its backward, and
// the KV-cached form used for decoding (oracle for the GQA attention kernels).
//
// q (B·S, nHead·hd), k and v (B·S, nKvHead·hd); row r = b·S + i is token i of sequence b. Query head h
// reads key/value head ⌊h / g⌋, g = nHead/nKvHead (transformers' repeat_kv: repeat_interleave, so
// heads [kh·g, (kh+1)·g) share head kh). Query i sees key j iff j ≤ i and mask[b, j] = 1; scores are
// scaled by `scale` (1/√hd in every supported family). A query that sees no key outputs zeros with
// all-zero probabilities, as the existing attention op (src/reference/seq/attention.ts) does.
// With nKvHead = nHead this is plain multi-head attention.

export interface GqaDims {
  B: number;
  S: number;
  nHead: number;
  nKvHead: number;
  headDim: number;
  scale: number;
}

function checkGroups(nHead: number, nKvHead: number): number {
  if (!Number.isInteger(nHead / nKvHead)) throw new Error(`nHead ${nHead} is not a multiple of nKvHead ${nKvHead}`);
  return nHead / nKvHead;
}

/** Softmax of scores[0..n) over visible keys into p (zeros elsewhere; all zeros when none is visible). */
function maskedSoftmax(scores: Float64Array, visible: (j: number) => boolean, n: number, p: Float64Array, pOff: number): void {
  let m = -Infinity;
  for (let j = 0; j < n; j++) if (visible(j)) m = Math.max(m, scores[j]);
  if (m === -Infinity) {
    p.fill(0, pOff, pOff + n);
    return;
  }
  let sum = 0;
  for (let j = 0; j < n; j++) sum += visible(j) ? Math.exp(scores[j] - m) : 0;
  for (let j = 0; j < n; j++) p[pOff + j] = visible(j) ? Math.exp(scores[j] - m) / sum : 0;
}

/** out (B·S, nHead·hd), probs (B, nHead, S, S). */
export function gqaAttentionRef(
  q: ArrayLike<number>,
  k: ArrayLike<number>,
  v: ArrayLike<number>,
  mask: ArrayLike<number>,
  dims: GqaDims,
): { out: Float64Array; probs: Float64Array } {
  const { B, S, nHead, nKvHead, headDim: hd, scale } = dims;
  const g = checkGroups(nHead, nKvHead);
  const qW = nHead * hd;
  const kvW = nKvHead * hd;
  const out = new Float64Array(B * S * qW);
  const probs = new Float64Array(B * nHead * S * S);
  const scores = new Float64Array(S);
  for (let b = 0; b < B; b++) {
    for (let h = 0; h < nHead; h++) {
      const kh = Math.floor(h / g);
      for (let i = 0; i < S; i++) {
        const qOff = (b * S + i) * qW + h * hd;
        const visible = (j: number) => j <= i && mask[b * S + j] !== 0;
        for (let j = 0; j < S; j++) {
          const kOff = (b * S + j) * kvW + kh * hd;
          let s = 0;
          for (let d = 0; d < hd; d++) s += q[qOff + d] * k[kOff + d];
          scores[j] = s * scale;
        }
        const pOff = ((b * nHead + h) * S + i) * S;
        maskedSoftmax(scores, visible, S, probs, pOff);
        for (let j = 0; j < S; j++) {
          const p = probs[pOff + j];
          if (p === 0) continue;
          const vOff = (b * S + j) * kvW + kh * hd;
          for (let d = 0; d < hd; d++) out[qOff + d] += p * v[vOff + d];
        }
      }
    }
  }
  return { out, probs };
}

/**
 * Gradients from gradOut (B·S, nHead·hd) and the saved probs P, per query head h with kv head kh:
 *   dV_j += Σ_i P_ij dO_i;  dP_ij = dO_i·V_j;  dS_ij = P_ij (dP_ij − Σ_j' P_ij' dP_ij');
 *   dQ_i = scale·Σ_j dS_ij K_j;  dK_j += scale·Σ_i dS_ij Q_i   (summed over the g heads sharing kh).
 */
export function gqaAttentionBackwardRef(
  gradOut: ArrayLike<number>,
  q: ArrayLike<number>,
  k: ArrayLike<number>,
  v: ArrayLike<number>,
  probs: ArrayLike<number>,
  dims: GqaDims,
): { gradQ: Float64Array; gradK: Float64Array; gradV: Float64Array } {
  const { B, S, nHead, nKvHead, headDim: hd, scale } = dims;
  const g = checkGroups(nHead, nKvHead);
  const qW = nHead * hd;
  const kvW = nKvHead * hd;
  const gradQ = new Float64Array(B * S * qW);
  const gradK = new Float64Array(B * S * kvW);
  const gradV = new Float64Array(B * S * kvW);
  const dP = new Float64Array(S);
  for (let b = 0; b < B; b++) {
    for (let h = 0; h < nHead; h++) {
      const kh = Math.floor(h / g);
      for (let i = 0; i < S; i++) {
        const pOff = ((b * nHead + h) * S + i) * S;
        const oOff = (b * S + i) * qW + h * hd;
        let rowDot = 0;
        for (let j = 0; j < S; j++) {
          const vOff = (b * S + j) * kvW + kh * hd;
          let dp = 0;
          for (let d = 0; d < hd; d++) dp += gradOut[oOff + d] * v[vOff + d];
          dP[j] = dp;
          rowDot += probs[pOff + j] * dp;
        }
        for (let j = 0; j < S; j++) {
          const p = probs[pOff + j];
          if (p === 0) continue;
          const ds = p * (dP[j] - rowDot) * scale;
          const kOff = (b * S + j) * kvW + kh * hd;
          for (let d = 0; d < hd; d++) {
            gradQ[oOff + d] += ds * k[kOff + d];
            gradK[kOff + d] += ds * q[oOff + d];
            gradV[kOff + d] += p * gradOut[oOff + d];
          }
        }
      }
    }
  }
  return { gradQ, gradK, gradV };
}

export interface GqaCacheDims {
  B: number;
  /** New positions this call adds (prefill: the prompt width; decode: 1). */
  L: number;
  /** Cache length (columns of mask). */
  Smax: number;
  nHead: number;
  nKvHead: number;
  headDim: number;
  scale: number;
  /** Absolute column of the first new position. */
  start: number;
}

/**
 * KV-cached attention for L new positions [start, start + L): writes their k and v into the caches
 * kCache, vCache (B, Smax, nKvHead·hd) in place, then query l (column start + l) attends to cached
 * columns j ≤ start + l with mask[b, j] = 1 (mask (B, Smax)). q (B·L, nHead·hd) → out (B·L, nHead·hd).
 */
export function gqaAttentionCachedRef(
  q: ArrayLike<number>,
  kNew: ArrayLike<number>,
  vNew: ArrayLike<number>,
  kCache: Float64Array,
  vCache: Float64Array,
  mask: ArrayLike<number>,
  dims: GqaCacheDims,
): Float64Array {
  const { B, L, Smax, nHead, nKvHead, headDim: hd, scale, start } = dims;
  const g = checkGroups(nHead, nKvHead);
  if (start < 0 || start + L > Smax) throw new Error(`positions [${start}, ${start + L}) do not fit a cache of ${Smax}`);
  const qW = nHead * hd;
  const kvW = nKvHead * hd;
  for (let b = 0; b < B; b++) {
    for (let l = 0; l < L; l++) {
      const src = (b * L + l) * kvW;
      const dst = (b * Smax + start + l) * kvW;
      for (let c = 0; c < kvW; c++) {
        kCache[dst + c] = kNew[src + c];
        vCache[dst + c] = vNew[src + c];
      }
    }
  }
  const out = new Float64Array(B * L * qW);
  const scores = new Float64Array(Smax);
  const p = new Float64Array(Smax);
  for (let b = 0; b < B; b++) {
    for (let h = 0; h < nHead; h++) {
      const kh = Math.floor(h / g);
      for (let l = 0; l < L; l++) {
        const i = start + l;
        const qOff = (b * L + l) * qW + h * hd;
        const visible = (j: number) => j <= i && mask[b * Smax + j] !== 0;
        for (let j = 0; j <= i; j++) {
          const kOff = (b * Smax + j) * kvW + kh * hd;
          let s = 0;
          for (let d = 0; d < hd; d++) s += q[qOff + d] * kCache[kOff + d];
          scores[j] = s * scale;
        }
        maskedSoftmax(scores, visible, i + 1, p, 0);
        for (let j = 0; j <= i; j++) {
          if (p[j] === 0) continue;
          const vOff = (b * Smax + j) * kvW + kh * hd;
          for (let d = 0; d < hd; d++) out[qOff + d] += p[j] * vCache[vOff + d];
        }
      }
    }
  }
  return out;
}
