// Rotary position embedding (transformers' apply_rotary_pos_emb with rotate_half: dims j and
// j + Dh/2 of each head form a pair, not interleaved neighbours) and its backward.
//
// Math: φ = position·inv_freq[j];  forward (sign = +1) and backward (sign = −1, the inverse
// rotation, a rotation's transpose):
//   y[j]        = x[j]·cos φ − x[j + Dh/2]·(sign·sin φ)
//   y[j + Dh/2] = x[j + Dh/2]·cos φ + x[j]·(sign·sin φ)
// for every head of every row. The angle is never formed as an f32 product (at position 8 000 one
// ulp of φ is 5e-4 rad, and WGSL's sin/cos promise nothing outside [−π, π]):
//   freq[j] holds inv_freq[j]/(2π) as a 64-bit fixed-point fraction of a turn, C = (hi, lo); the
//   turns pos·C mod 2^64 are an exact integer product (u32 limbs; a negative position negates
//   it); rounding to the nearest quarter turn gives the quadrant q (top 2 bits) and a remainder
//   r ∈ [−1/8, 1/8) turn, exact; x = r·2π ∈ [−π/4, π/4] takes one f32 rounding; sin and cos of x
//   are Taylor polynomials to x⁹ and x¹⁰ (truncation < 3e-9), evaluated with adds and multiplies
//   only, so every implementation gives the same few-ulp result; (cos φ, sin φ) follow from q.
//   The angle is right to ~1e-7 rad at any position, where an f32 product is off by position·6e-8.
// Reference: src/reference/nn/rope.ts (ropeRef, ropeBackwardRef); freq from src/ops/rope.ts
//   (ropeFrequencies).
//
// Bindings: 0 uniform P {R rows, H heads, half = Dh/2, sign}; 1 x (R, H·Dh) f32; 2 positions (R)
//   i32; 3 freq (half, 2) u32 words (hi, lo); 4 y (R, H·Dh) f32 rw.
// Layout: one thread per (row, pair j): it forms (cos φ, sin φ) once and rotates pair j of all H
//   heads (consecutive threads take consecutive j: coalesced). WG threads per workgroup, grid
//   ⌈R·half/WG⌉ folded 2-D past 65535: t = gid.x + gid.y·num_workgroups.x·WG.

const WG: u32 = 64u;

struct Params {
  R: u32,
  H: u32,
  half: u32,
  sign: f32, // +1 forward, −1 backward
}

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> positions: array<i32>;
@group(0) @binding(3) var<storage, read> freq: array<u32>;
@group(0) @binding(4) var<storage, read_write> rotated: array<f32>;

/** The 64-bit product of two u32 as (lo, hi), from 16-bit limbs (each partial product fits a u32). */
fn mul_wide(a: u32, b: u32) -> vec2u {
  let a0 = a & 0xffffu;
  let a1 = a >> 16u;
  let b0 = b & 0xffffu;
  let b1 = b >> 16u;
  let p00 = a0 * b0;
  let p01 = a0 * b1;
  let p10 = a1 * b0;
  let p11 = a1 * b1;
  let mid = (p00 >> 16u) + (p01 & 0xffffu) + (p10 & 0xffffu);
  return vec2u((mid << 16u) | (p00 & 0xffffu), p11 + (p01 >> 16u) + (p10 >> 16u) + (mid >> 16u));
}

/** (cos φ, sin φ) for φ = 2π·(pos·C mod 2^64)/2^64, C = (hi, lo). */
fn cos_sin(pos: i32, hi: u32, lo: u32) -> vec2f {
  let p = u32(abs(pos)); // |i32::MIN| wraps to 2^31, its magnitude as a u32
  let low = mul_wide(p, lo);
  var u_lo = low.x;
  var u_hi = low.y + p * hi; // mod 2^64: pos·hi contributes its low 32 bits to the high word
  if (pos < 0) {
    // Two's-complement negation of the 64-bit (u_hi, u_lo).
    u_lo = ~u_lo + 1u;
    u_hi = ~u_hi + select(0u, 1u, u_lo == 0u);
  }
  u_hi += 0x20000000u; // + 1/8 turn: the quadrant below is the nearest quarter
  let q = u_hi >> 30u;
  // r = (remainder − 1/8 turn) ∈ [−1/8, 1/8) turn, from its top 30 bits and the low word.
  let top = f32(i32(u_hi & 0x3fffffffu) - 0x20000000);
  let turns = (top + f32(u_lo) * 2.3283064365386963e-10) * 2.3283064365386963e-10; // 2^-32
  let x = turns * 6.2831854820251465; // 2π in f32
  let x2 = x * x;
  let s = x * (1.0 + x2 * (-1.6666667e-1 + x2 * (8.3333333e-3 + x2 * (-1.9841270e-4 + x2 * 2.7557319e-6))));
  let c = 1.0 + x2 * (-0.5 + x2 * (4.1666668e-2 + x2 * (-1.3888889e-3 + x2 * (2.4801587e-5 + x2 * -2.7557319e-7))));
  switch q {
    case 0u: { return vec2f(c, s); }
    case 1u: { return vec2f(-s, c); }
    case 2u: { return vec2f(-c, -s); }
    default: { return vec2f(s, -c); }
  }
}

@compute @workgroup_size(WG)
fn rope(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let t = gid.x + gid.y * nwg.x * WG;
  if (t >= P.R * P.half) { return; }
  let row = t / P.half;
  let j = t % P.half;
  let cs = cos_sin(positions[row], freq[2u * j], freq[2u * j + 1u]);
  let c = cs.x;
  let s = P.sign * cs.y;
  let dh = 2u * P.half;
  for (var h = 0u; h < P.H; h++) {
    let o = (row * P.H + h) * dh + j;
    let a = x[o];
    let b = x[o + P.half];
    rotated[o] = a * c - b * s;
    rotated[o + P.half] = b * c + a * s;
  }
}
