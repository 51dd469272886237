// Shared KL estimator math (included with `// @include lib_kl`), d = logp − ref_logp:
//   kl_value: k1 = d; abs = |d|; k2 = ½·d²; k3 = clamp(exp(−d') + d' − 1, −10, 10), d' = clamp(d, −20, 20);
//             k1+ = k1; k3+ = k3; k1_clamped = max(d, 0)
//   kl_grad:  ∂/∂logp of the above, 0 where a clamp is active; k1+ and k3+ take k2's gradient d
//             (verl kl_penalty's straight-through "+" suffix); k1_clamped: 1 where d > 0, else 0.
// Estimator codes: 0 = k1, 1 = abs, 2 = k2, 3 = k3, 4 = k1+, 5 = k3+, 6 = k1_clamped
// (src/reference/kl.ts KL_ESTIMATOR_CODE).

fn kl_k3(d: f32) -> f32 {
  let dc = clamp(d, -20.0, 20.0);
  return clamp(exp(-dc) + dc - 1.0, -10.0, 10.0);
}

fn kl_value(d: f32, estimator: u32) -> f32 {
  switch estimator {
    case 0u, 4u: { return d; }
    case 1u: { return abs(d); }
    case 2u: { return 0.5 * d * d; }
    case 6u: { return max(d, 0.0); }
    default: { return kl_k3(d); }
  }
}

fn kl_grad(d: f32, estimator: u32) -> f32 {
  switch estimator {
    case 0u: { return 1.0; }
    case 1u: { return sign(d); }
    case 2u, 4u, 5u: { return d; }
    case 6u: { return select(0.0, 1.0, d > 0.0); }
    default: {
      if (d < -20.0 || d > 20.0) { return 0.0; }
      let e = exp(-d);
      if (e + d - 1.0 > 10.0) { return 0.0; }
      return 1.0 - e;
    }
  }
}
