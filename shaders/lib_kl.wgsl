// Shared KL estimator math (included with `// @include lib_kl`), d = logp − ref_logp:
//   kl_value: k1 = d; abs = |d|; k2 = ½·d²; k3 = clamp(exp(−d') + d' − 1, −10, 10), d' = clamp(d, −20, 20)
//   kl_grad:  ∂/∂logp of the above, 0 where a clamp is active.
// Estimator codes: 0 = k1, 1 = abs, 2 = k2, 3 = k3 (src/reference/kl.ts KL_ESTIMATOR_CODE).

fn kl_value(d: f32, estimator: u32) -> f32 {
  switch estimator {
    case 0u: { return d; }
    case 1u: { return abs(d); }
    case 2u: { return 0.5 * d * d; }
    default: {
      let dc = clamp(d, -20.0, 20.0);
      return clamp(exp(-dc) + dc - 1.0, -10.0, 10.0);
    }
  }
}

fn kl_grad(d: f32, estimator: u32) -> f32 {
  switch estimator {
    case 0u: { return 1.0; }
    case 1u: { return sign(d); }
    case 2u: { return d; }
    default: {
      if (d < -20.0 || d > 20.0) { return 0.0; }
      let e = exp(-d);
      if (e + d - 1.0 > 10.0) { return 0.0; }
      return 1.0 - e;
    }
  }
}
