// Shared KL estimator math (included with `// @include lib_kl`), d = logp − ref_logp:
//   kl_value: k1 = d; abs = |d|; k2 = ½·d²; k3 = clamp(exp(−d') + d' − 1, ±KL_K3_CLAMP),
//             d' = clamp(d, ±KL_LOG_RATIO_CLAMP);
//             k1+ = k1; k3+ = k3; k1_clamped = max(d, 0)
//   kl_grad:  ∂/∂logp of the above, 0 where a clamp is active; k1+ and k3+ take k2's gradient d
//             (verl kl_penalty's straight-through "+" suffix); k1_clamped: 1 where d > 0, else 0.
// Estimator codes: the KL_* constants, generated from src/reference/kernelCodes.ts KL_ESTIMATOR_CODE
// by the shader loader (k1+ is KL_K1_PLUS); the two clamps come from src/reference/kl.ts the same way.

fn kl_k3(d: f32) -> f32 {
  let dc = clamp(d, -KL_LOG_RATIO_CLAMP, KL_LOG_RATIO_CLAMP);
  return clamp(exp(-dc) + dc - 1.0, -KL_K3_CLAMP, KL_K3_CLAMP);
}

fn kl_value(d: f32, estimator: u32) -> f32 {
  switch estimator {
    case KL_K1, KL_K1_PLUS: { return d; }
    case KL_ABS: { return abs(d); }
    case KL_K2: { return 0.5 * d * d; }
    case KL_K1_CLAMPED: { return max(d, 0.0); }
    case KL_K3, KL_K3_PLUS, default: { return kl_k3(d); }
  }
}

fn kl_grad(d: f32, estimator: u32) -> f32 {
  switch estimator {
    case KL_K1: { return 1.0; }
    case KL_ABS: { return sign(d); }
    case KL_K2, KL_K1_PLUS, KL_K3_PLUS: { return d; }
    case KL_K1_CLAMPED: { return select(0.0, 1.0, d > 0.0); }
    case KL_K3, default: {
      if (d < -KL_LOG_RATIO_CLAMP || d > KL_LOG_RATIO_CLAMP) { return 0.0; }
      let e = exp(-d);
      if (e + d - 1.0 > KL_K3_CLAMP) { return 0.0; }
      return 1.0 - e;
    }
  }
}
