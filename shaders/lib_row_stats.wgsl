// Softmax statistics of one logits row, by one thread walking v in order (included with
// `// @include lib_row_stats`; the including shader declares `logits`). With d_v = (x_v − m)/T and
// m the row's max logit:
//   s = Σ_v e^{d_v},  s1 = Σ_v e^{d_v}·d_v,  other = Σ_{v≠tok} e^{d_v}
// so log p_tok = d_tok − log s, the entropy H = log s − s1/s, and 1 − p_tok = other/s without the
// cancellation of 1 − e^{log p}. Shared by logprobs.wgsl (its small-vocabulary path) and the fused
// actor loss.

struct RowStats {
  m: f32,     // max logit of the row
  s: f32,     // Σ exp(d)
  s1: f32,    // Σ exp(d)·d
  other: f32, // Σ_{v≠tok} exp(d)
}

fn row_stats_serial(base: u32, tok: u32, V: u32, temperature: f32) -> RowStats {
  var m = logits[base];
  for (var v = 1u; v < V; v++) { m = max(m, logits[base + v]); }
  var s = 0.0;
  var s1 = 0.0;
  var other = 0.0;
  for (var v = 0u; v < V; v++) {
    let d = (logits[base + v] - m) / temperature;
    let e = exp(d);
    s += e;
    s1 += e * d;
    if (v != tok) { other += e; }
  }
  return RowStats(m, s, s1, other);
}
