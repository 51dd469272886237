// The gated MLP activation of Llama/Qwen (LlamaMLP: down(silu(gate(x))·up(x))) and its backward,
// on separate gate and up tensors or on one (M, 2F) gate|up product (a single matmul against the
// stacked [gate; up] weight): row m holds gate in columns [0, F) and up in [F, 2F).
//
// Math, with σ(g) from e = exp(−|g|) ≤ 1 (no overflow either side) and 1 − σ formed the same
// way (no cancellation for large g):
//   y = silu(g)·u,  silu(g) = g·σ(g)
//   gradGate = (gradY·u)·σ·(1 + g·(1 − σ)),  gradUp = gradY·silu(g)
// Reference: src/reference/nn/swiglu.ts (swigluRef, swigluBackwardRef).
//
// Bindings (uniform P {M, F} at 0, all f32):
//   swiglu:                1 gate (M,F), 2 up (M,F), 3 y_out (M,F) rw
//   swiglu_backward:       1 gate (M,F), 2 up (M,F), 3 grad_y (M,F), 4 grad_gate (M,F) rw, 5 grad_up (M,F) rw
//   swiglu_fused:          1 gate_up (M,2F), 2 fused_y (M,F) rw
//   swiglu_fused_backward: 1 gate_up (M,2F), 2 fused_grad_y (M,F), 3 grad_gate_up (M,2F) rw
// Layout: one thread per (m, f), WG per workgroup, grid ⌈M·F/WG⌉ folded 2-D past 65535:
//   i = gid.x + gid.y·num_workgroups.x·WG.

const WG: u32 = 256u;

struct Params {
  M: u32,
  F: u32,
}

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> gate: array<f32>;
@group(0) @binding(1) var<storage, read> gate_up: array<f32>;
@group(0) @binding(2) var<storage, read> up: array<f32>;
@group(0) @binding(2) var<storage, read_write> fused_y: array<f32>;
@group(0) @binding(2) var<storage, read> fused_grad_y: array<f32>;
@group(0) @binding(3) var<storage, read_write> y_out: array<f32>;
@group(0) @binding(3) var<storage, read> grad_y: array<f32>;
@group(0) @binding(3) var<storage, read_write> grad_gate_up: array<f32>;
@group(0) @binding(4) var<storage, read_write> grad_gate: array<f32>;
@group(0) @binding(5) var<storage, read_write> grad_up: array<f32>;

/** (σ(g), 1 − σ(g)), each from e = exp(−|g|). */
fn sigmoid_pair(g: f32) -> vec2f {
  let e = exp(-abs(g));
  let s = 1.0 / (1.0 + e);
  return select(vec2f(e * s, s), vec2f(s, e * s), g >= 0.0);
}

fn element(gid: vec3u, nwg: vec3u) -> u32 {
  return gid.x + gid.y * nwg.x * WG;
}

@compute @workgroup_size(WG)
fn swiglu(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = element(gid, nwg);
  if (i >= P.M * P.F) { return; }
  let g = gate[i];
  y_out[i] = g * sigmoid_pair(g).x * up[i];
}

@compute @workgroup_size(WG)
fn swiglu_backward(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = element(gid, nwg);
  if (i >= P.M * P.F) { return; }
  let g = gate[i];
  let sg = sigmoid_pair(g);
  grad_gate[i] = grad_y[i] * up[i] * (sg.x * (1.0 + g * sg.y));
  grad_up[i] = grad_y[i] * (g * sg.x);
}

@compute @workgroup_size(WG)
fn swiglu_fused(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = element(gid, nwg);
  if (i >= P.M * P.F) { return; }
  let at = (i / P.F) * 2u * P.F + i % P.F;
  let g = gate_up[at];
  fused_y[i] = g * sigmoid_pair(g).x * gate_up[at + P.F];
}

@compute @workgroup_size(WG)
fn swiglu_fused_backward(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = element(gid, nwg);
  if (i >= P.M * P.F) { return; }
  let at = (i / P.F) * 2u * P.F + i % P.F;
  let g = gate_up[at];
  let u = gate_up[at + P.F];
  let sg = sigmoid_pair(g);
  grad_gate_up[at] = fused_grad_y[i] * u * (sg.x * (1.0 + g * sg.y));
  grad_gate_up[at + P.F] = fused_grad_y[i] * (g * sg.x);
}
