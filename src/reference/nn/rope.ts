// float64 reference of rotary position embeddings as transformers applies them (modeling_llama.py
// apply_rotary_pos_emb with rotate_half; modeling_rope_utils.py for the frequencies) and the backward.
//
// Frequencies: inv[i] = θ^(−2i/hd), i < hd/2 ("default"); llama3 rescales them by wavelength
// λ = 2π/inv[i] against the original context L (factor f, low/high frequency factors a < b):
//   λ < L/b: unchanged;  λ > L/a: inv/f;  between: (1 − s)·inv/f + s·inv with s = (L/λ − a)/(b − a).
// Rotation, the rotate_half convention (NOT interleaved pairs): head dims j and j + hd/2 form a pair,
// angle φ = position·inv[j]:
//   y[j]        = x[j]·cos φ − x[j + hd/2]·sin φ
//   y[j + hd/2] = x[j + hd/2]·cos φ + x[j]·sin φ
// Backward is the inverse rotation (a rotation's transpose):
//   dx[j] = g[j]·cos φ + g[j + hd/2]·sin φ,   dx[j + hd/2] = g[j + hd/2]·cos φ − g[j]·sin φ
// Rows of x are tokens (R), each holding H heads of width hd: x (R, H·hd); positions (R) are the
// token's position id (left-padded rows: cumsum(mask) − 1, so a row's first real token is at 0).

export interface Llama3Scaling {
  type: 'llama3';
  factor: number;
  lowFreqFactor: number;
  highFreqFactor: number;
  originalMaxPositions: number;
}

/** inv_freq (hd/2) for base θ, with llama3 scaling when given. */
export function ropeInvFreq(headDim: number, theta: number, scaling: Llama3Scaling | null = null): Float64Array {
  const half = headDim / 2;
  const inv = new Float64Array(half);
  for (let i = 0; i < half; i++) inv[i] = 1 / theta ** ((2 * i) / headDim);
  if (!scaling) return inv;
  const { factor, lowFreqFactor, highFreqFactor, originalMaxPositions: L } = scaling;
  const lowWavelen = L / lowFreqFactor;
  const highWavelen = L / highFreqFactor;
  for (let i = 0; i < half; i++) {
    const wavelen = (2 * Math.PI) / inv[i];
    if (wavelen > lowWavelen) inv[i] = inv[i] / factor;
    else if (wavelen >= highWavelen) {
      const s = (L / wavelen - lowFreqFactor) / (highFreqFactor - lowFreqFactor);
      inv[i] = ((1 - s) * inv[i]) / factor + s * inv[i];
    }
  }
  return inv;
}

function rotate(x: ArrayLike<number>, positions: ArrayLike<number>, invFreq: ArrayLike<number>, H: number, sign: 1 | -1): Float64Array {
  const half = invFreq.length;
  const hd = 2 * half;
  const R = positions.length;
  const y = new Float64Array(R * H * hd);
  for (let r = 0; r < R; r++) {
    for (let i = 0; i < half; i++) {
      const phi = positions[r] * invFreq[i];
      const c = Math.cos(phi);
      const s = sign * Math.sin(phi);
      for (let h = 0; h < H; h++) {
        const o = (r * H + h) * hd;
        const a = x[o + i];
        const b = x[o + i + half];
        y[o + i] = a * c - b * s;
        y[o + i + half] = b * c + a * s;
      }
    }
  }
  return y;
}

/** RoPE forward: x (R, H·hd), positions (R) → y (R, H·hd). */
export function ropeRef(x: ArrayLike<number>, positions: ArrayLike<number>, invFreq: ArrayLike<number>, H: number): Float64Array {
  return rotate(x, positions, invFreq, H, 1);
}

/** RoPE backward: gradY (R, H·hd) → gradX (R, H·hd) (rotation by −φ). */
export function ropeBackwardRef(gradY: ArrayLike<number>, positions: ArrayLike<number>, invFreq: ArrayLike<number>, H: number): Float64Array {
  return rotate(gradY, positions, invFreq, H, -1);
}

/** Position ids of left-padded rows: cumsum(mask) − 1, and 0 on padding (verl's compute_position_id_with_mask). */
export function positionsFromMask(mask: ArrayLike<number>, B: number, S: number): Int32Array {
  const pos = new Int32Array(B * S);
  for (let b = 0; b < B; b++) {
    let n = 0;
    for (let t = 0; t < S; t++) {
      if (mask[b * S + t] !== 0) n++;
      pos[b * S + t] = Math.max(0, n - 1);
    }
  }
  return pos;
}
