// float64 reference of what a flash-style attention forward saves for its backward: the
// logsumexp of each query row's visible scores (oracle for shaders/gqa_attention.wgsl's `lse`).
//   lse[b, h, i] = log Σ_{j ≤ i, mask[b, j] = 1} exp(s_ij),  s_ij = (q_i·k_j)·scale,
// 0 for a query that sees no key. Layouts as src/reference/seq/gqa.ts (GqaDims).
import type { GqaDims } from './gqa.ts';

/** lse (B, nHead, S). */
export function gqaLogsumexpRef(q: ArrayLike<number>, k: ArrayLike<number>, mask: ArrayLike<number>, dims: GqaDims): Float64Array {
  const { B, S, nHead, nKvHead, headDim: hd, scale } = dims;
  const g = nHead / nKvHead;
  const qW = nHead * hd;
  const kvW = nKvHead * hd;
  const lse = new Float64Array(B * nHead * S);
  const scores = new Float64Array(S);
  for (let b = 0; b < B; b++) {
    for (let h = 0; h < nHead; h++) {
      const kh = Math.floor(h / g);
      for (let i = 0; i < S; i++) {
        const qOff = (b * S + i) * qW + h * hd;
        let m = -Infinity;
        for (let j = 0; j <= i; j++) {
          if (mask[b * S + j] === 0) continue;
          const kOff = (b * S + j) * kvW + kh * hd;
          let s = 0;
          for (let d = 0; d < hd; d++) s += q[qOff + d] * k[kOff + d];
          scores[j] = s * scale;
          m = Math.max(m, scores[j]);
        }
        if (m === -Infinity) continue;
        let sum = 0;
        for (let j = 0; j <= i; j++) if (mask[b * S + j] !== 0) sum += Math.exp(scores[j] - m);
        lse[(b * nHead + h) * S + i] = m + Math.log(sum);
      }
    }
  }
  return lse;
}
