// float64 reference: causal multi-head self-attention over left-padded batches, and its backward.
// Layout: qkv (B·S, 3D) row r = b·S + i holds [q | k | v]; head h uses columns h·Dh .. (h+1)·Dh
// of each third. Query i sees key j iff j ≤ i and mask[b,j] = 1; a query that sees no key
// outputs zeros and has all-zero probabilities.

export interface AttnDims {
  B: number;
  S: number;
  H: number;
  /** Model width D = H·Dh. */
  D: number;
}

/** Row-wise masked softmax of scores (S) over visible keys, written into p (zeros elsewhere). */
function maskedSoftmax(scores: Float64Array, visible: (j: number) => boolean, n: number, p: Float64Array, pOff: number): void {
  let m = -Infinity;
  for (let j = 0; j < n; j++) if (visible(j)) m = Math.max(m, scores[j]);
  if (m === -Infinity) {
    for (let j = 0; j < n; j++) p[pOff + j] = 0;
    return;
  }
  let sum = 0;
  for (let j = 0; j < n; j++) sum += visible(j) ? Math.exp(scores[j] - m) : 0;
  for (let j = 0; j < n; j++) p[pOff + j] = visible(j) ? Math.exp(scores[j] - m) / sum : 0;
}

/** out (B·S, D), probs (B,H,S,S). */
export function attentionRef(qkv: ArrayLike<number>, mask: ArrayLike<number>, dims: AttnDims): { out: Float64Array; probs: Float64Array } {
  const { B, S, H, D } = dims;
  const Dh = D / H;
  const scale = 1 / Math.sqrt(Dh);
  const out = new Float64Array(B * S * D);
  const probs = new Float64Array(B * H * S * S);
  const scores = new Float64Array(S);
  for (let b = 0; b < B; b++) {
    for (let h = 0; h < H; h++) {
      for (let i = 0; i < S; i++) {
        const qOff = (b * S + i) * 3 * D + h * Dh;
        const visible = (j: number) => j <= i && mask[b * S + j] === 1;
        for (let j = 0; j < S; j++) {
          const kOff = (b * S + j) * 3 * D + D + h * Dh;
          let s = 0;
          for (let d = 0; d < Dh; d++) s += qkv[qOff + d] * qkv[kOff + d];
          scores[j] = s * scale;
        }
        const pOff = ((b * H + h) * S + i) * S;
        maskedSoftmax(scores, visible, S, probs, pOff);
        const oOff = (b * S + i) * D + h * Dh;
        for (let j = 0; j < S; j++) {
          const p = probs[pOff + j];
          if (p === 0) continue;
          const vOff = (b * S + j) * 3 * D + 2 * D + h * Dh;
          for (let d = 0; d < Dh; d++) out[oOff + d] += p * qkv[vOff + d];
        }
      }
    }
  }
  return { out, probs };
}

/**
 * gradQkv (B·S, 3D) from gradOut (B·S, D) and the saved probs P:
 *   dV_j = Σ_i P_ij dO_i;  dP_ij = dO_i·V_j;  dS_ij = P_ij (dP_ij − Σ_j' P_ij' dP_ij');
 *   dQ_i = Σ_j dS_ij K_j / √Dh;  dK_j = Σ_i dS_ij Q_i / √Dh.
 * Hidden keys have P = 0, hence dS = 0: they receive no gradient through the scores.
 */
export function attentionBackwardRef(gradOut: ArrayLike<number>, qkv: ArrayLike<number>, probs: ArrayLike<number>, dims: AttnDims): Float64Array {
  const { B, S, H, D } = dims;
  const Dh = D / H;
  const scale = 1 / Math.sqrt(Dh);
  const g = new Float64Array(B * S * 3 * D);
  const dS = new Float64Array(S);
  const row = (b: number, i: number) => (b * S + i) * 3 * D;
  for (let b = 0; b < B; b++) {
    for (let h = 0; h < H; h++) {
      for (let i = 0; i < S; i++) {
        const pOff = ((b * H + h) * S + i) * S;
        const oOff = (b * S + i) * D + h * Dh;
        let rowDot = 0;
        for (let j = 0; j < S; j++) {
          const vOff = row(b, j) + 2 * D + h * Dh;
          let dp = 0;
          for (let d = 0; d < Dh; d++) dp += gradOut[oOff + d] * qkv[vOff + d];
          dS[j] = dp;
          rowDot += probs[pOff + j] * dp;
        }
        for (let j = 0; j < S; j++) {
          const p = probs[pOff + j];
          const ds = p * (dS[j] - rowDot);
          const qOff = row(b, i) + h * Dh;
          const kOff = row(b, j) + D + h * Dh;
          const vOff = row(b, j) + 2 * D + h * Dh;
          for (let d = 0; d < Dh; d++) {
            g[qOff + d] += ds * qkv[kOff + d] * scale;
            g[kOff + d] += ds * qkv[qOff + d] * scale;
            g[vOff + d] += p * gradOut[oOff + d];
          }
        }
      }
    }
  }
  return g;
}

/**
 * KV-cached attention for L new positions [start, start+L): copies their k, v into the caches
 * (B, Smax, D) in place, then query l (absolute position start+l) attends to cached keys
 * j ≤ start+l with mask[b,j] = 1 (mask (B, Smax)). qkv (B·L, 3D) → out (B·L, D).
 */
export function attentionCachedRef(
  qkv: ArrayLike<number>,
  kCache: Float64Array,
  vCache: Float64Array,
  mask: ArrayLike<number>,
  dims: { B: number; L: number; Smax: number; H: number; D: number; start: number },
): Float64Array {
  const { B, L, Smax, H, D, start } = dims;
  const Dh = D / H;
  const scale = 1 / Math.sqrt(Dh);
  for (let b = 0; b < B; b++) {
    for (let l = 0; l < L; l++) {
      const src = (b * L + l) * 3 * D;
      const dst = (b * Smax + start + l) * D;
      for (let c = 0; c < D; c++) {
        kCache[dst + c] = qkv[src + D + c];
        vCache[dst + c] = qkv[src + 2 * D + c];
      }
    }
  }
  const out = new Float64Array(B * L * D);
  const scores = new Float64Array(Smax);
  const p = new Float64Array(Smax);
  for (let b = 0; b < B; b++) {
    for (let h = 0; h < H; h++) {
      for (let l = 0; l < L; l++) {
        const i = start + l;
        const qOff = (b * L + l) * 3 * D + h * Dh;
        const visible = (j: number) => j <= i && mask[b * Smax + j] === 1;
        for (let j = 0; j <= i; j++) {
          const kOff = (b * Smax + j) * D + h * Dh;
          let s = 0;
          for (let d = 0; d < Dh; d++) s += qkv[qOff + d] * kCache[kOff + d];
          scores[j] = s * scale;
        }
        maskedSoftmax(scores, visible, i + 1, p, 0);
        const oOff = (b * L + l) * D + h * Dh;
        for (let j = 0; j <= i; j++) {
          if (p[j] === 0) continue;
          const vOff = (b * Smax + j) * D + h * Dh;
          for (let d = 0; d < Dh; d++) out[oOff + d] += p[j] * vCache[vOff + d];
        }
      }
    }
  }
  return out;
}
