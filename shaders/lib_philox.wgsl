// Philox-4x32-10 (Salmon et al., SC 2011), included with `// @include lib_philox`: the draw for
// (seed, row, position) is a pure function, the same as src/util/philox.ts (sampleUniform), so a
// kernel (sample.wgsl, sample_vocab.wgsl) and the CPU reference draw the very same uniform.

fn philox_mulhi(a: u32, b: u32) -> u32 {
  let a_lo = a & 0xffffu;
  let a_hi = a >> 16u;
  let b_lo = b & 0xffffu;
  let b_hi = b >> 16u;
  let ll = a_lo * b_lo;
  let lh = a_lo * b_hi;
  let hl = a_hi * b_lo;
  let hh = a_hi * b_hi;
  let mid = (ll >> 16u) + (lh & 0xffffu) + (hl & 0xffffu);
  return hh + (lh >> 16u) + (hl >> 16u) + (mid >> 16u);
}

fn philox4x32_10(counter: vec4u, key: vec2u) -> vec4u {
  var c = counter;
  var k = key;
  for (var r = 0u; r < 10u; r++) {
    let hi0 = philox_mulhi(0xd2511f53u, c.x);
    let lo0 = 0xd2511f53u * c.x;
    let hi1 = philox_mulhi(0xcd9e8d57u, c.z);
    let lo1 = 0xcd9e8d57u * c.z;
    c = vec4u(hi1 ^ c.y ^ k.x, lo1, hi0 ^ c.w ^ k.y, lo0);
    k = k + vec2u(0x9e3779b9u, 0xbb67ae85u);
  }
  return c;
}

/** u in [0, 1) for (seed, row, pos): counter (row, pos, 0, 0), key (seed, 0), the first word's top 24 bits. */
fn sample_uniform(seed: u32, row: u32, pos: u32) -> f32 {
  return f32(philox4x32_10(vec4u(row, pos, 0u, 0u), vec2u(seed, 0u)).x >> 8u) * (1.0 / 16777216.0);
}
