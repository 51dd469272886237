// Rollout correction (the rollout-vs-old mismatch, "three policies"), float64 reference for
// shaders/tis.wgsl `rollout_correction`: verl's importance sampling at token or sequence level with a
// TIS cap or the IcePop band, verl's rejection sampling by token or sequence divergence, and
// OpenRLHF's TIS lower bound.
//
// Read from verl-project/verl v0.9.0 (commit 483b8a0), verl/trainer/ppo/rollout_corr_helper.py:
//   compute_rollout_correction_weights (L437–560): ρ = exp(clamp(lr, ±20)) per token ("token") or
//     exp(clamp(Σ_t m·lr, ±20)) for every token of the row ("sequence"), times the response mask; a
//     single threshold caps it (TIS), a "lower_upper" threshold zeroes it outside [lower, upper] (IcePop).
//   compute_rollout_rejection_mask (L193–400): per token lr' = clamp(lr, ±20), k1 = −lr',
//     k2 = ½·lr'², k3 = exp(lr') − 1 − lr'; token_k* test each token, seq_sum_k* / seq_mean_k* /
//     seq_max_k* the row's masked sum / masked mean (÷ (Σm + 1e-8)) / masked max (0 on an empty row).
//     k1 options keep log(lower) ≤ stat ≤ log(upper) (ratio bounds; one number u means lower = 1/u);
//     k2 / k3 keep stat ≤ upper. Every listed option must pass; the response mask is multiplied by
//     the product of the keeps.
//   _parse_rollout_is_threshold (L84–121), _parse_rollout_rs_thresholds (L124–190): the threshold specs.
// OpenRLHF v0.11.0 (commit 3c3be62), openrlhf/models/loss.py PolicyLoss.forward (L197–214): TIS
// clamps ρ = exp(old − rollout) to [low, high] (`--algo.advantage.is_correction_threshold LOW HIGH`);
// `tisLower` is that low bound (verl has none: its lower threshold means IcePop). OpenRLHF does not
// clamp the log-ratio at ±20 first; the two agree wherever exp(±20) lies outside [low, high].
//
// lr = old − rollout (log π_old − log π_rollout). Masked positions (m = 0) get weight 0 and keep 0,
// whatever the inputs hold there.
import { LOG_RATIO_CLAMP } from './policyLoss.ts';

export const ROLLOUT_IS_LEVELS = ['token', 'sequence'] as const;
export type RolloutIsLevel = (typeof ROLLOUT_IS_LEVELS)[number];

/** verl SUPPORTED_ROLLOUT_RS_OPTIONS (rollout_corr_helper.py L75–87). */
export const ROLLOUT_RS_OPTIONS = [
  'token_k1',
  'token_k2',
  'token_k3',
  'seq_sum_k1',
  'seq_sum_k2',
  'seq_sum_k3',
  'seq_mean_k1',
  'seq_mean_k2',
  'seq_mean_k3',
  'seq_max_k2',
  'seq_max_k3',
] as const;
export type RolloutRsOption = (typeof ROLLOUT_RS_OPTIONS)[number];

/** The most rejection criteria one dispatch applies (the kernel's uniform holds this many). */
export const ROLLOUT_RS_MAX = 4;

/** One rejection criterion: k1 options bound the ratio to [lower, upper]; k2 / k3 options the divergence by upper. */
export interface RolloutRsCriterion {
  option: RolloutRsOption;
  /** k1: the lower ratio bound (> 0); null for k2 / k3. */
  lower: number | null;
  upper: number;
}

export interface RolloutCorrectionParams {
  /** verl rollout_is: null = no weights (rejection only). */
  isLevel: RolloutIsLevel | null;
  /** verl rollout_is_threshold's upper bound: the TIS cap, or IcePop's upper edge. */
  isUpper: number;
  /** verl rollout_is_threshold's lower bound ("lower_upper"): set, weights outside [lower, upper] are 0 (IcePop). */
  isLower: number | null;
  /** OpenRLHF's TIS low threshold: ρ clamped to [tisLower, isUpper]; not with IcePop. */
  tisLower: number | null;
  /** verl rollout_rs with its parsed rollout_rs_threshold, in order; empty = no rejection. */
  rs: readonly RolloutRsCriterion[];
}

export const rsIsK1 = (o: RolloutRsOption) => o.endsWith('k1');
export const rsIsTokenLevel = (o: RolloutRsOption) => o.startsWith('token_');

/** Throws a clear message for parameters verl or OpenRLHF would refuse. */
export function validateRolloutCorrectionParams(p: RolloutCorrectionParams): void {
  const pos = (x: number) => Number.isFinite(x) && x > 0;
  if (p.isLevel !== null && !(ROLLOUT_IS_LEVELS as readonly string[]).includes(p.isLevel)) {
    throw new Error(`rolloutCorrection: rollout_is must be token or sequence, got ${p.isLevel}`);
  }
  if (!pos(p.isUpper)) throw new Error(`rolloutCorrection: rollout_is_threshold upper bound must be a finite number > 0, got ${p.isUpper}`);
  if (p.isLower !== null) {
    if (!pos(p.isLower)) throw new Error(`rolloutCorrection: the IcePop lower bound must be a finite number > 0, got ${p.isLower}`);
    if (p.isLower > p.isUpper) throw new Error(`rolloutCorrection: the IcePop lower bound ${p.isLower} exceeds the upper bound ${p.isUpper}`);
    if (p.tisLower !== null) throw new Error('rolloutCorrection: a TIS lower bound and the IcePop band exclude each other (IcePop zeroes weights below its lower bound)');
  }
  if (p.tisLower !== null) {
    if (!(Number.isFinite(p.tisLower) && p.tisLower >= 0)) throw new Error(`rolloutCorrection: the TIS lower bound must be a finite number ≥ 0, got ${p.tisLower}`);
    if (p.tisLower > p.isUpper) throw new Error(`rolloutCorrection: the TIS lower bound ${p.tisLower} exceeds the cap ${p.isUpper}`);
  }
  if (p.rs.length > ROLLOUT_RS_MAX) throw new Error(`rolloutCorrection: at most ${ROLLOUT_RS_MAX} rejection criteria, got ${p.rs.length}`);
  for (const c of p.rs) {
    if (!(ROLLOUT_RS_OPTIONS as readonly string[]).includes(c.option)) {
      throw new Error(`rolloutCorrection: unknown rollout_rs option ${c.option}; one of ${ROLLOUT_RS_OPTIONS.join(', ')}`);
    }
    if (!pos(c.upper)) throw new Error(`rolloutCorrection: the ${c.option} threshold must be a finite number > 0, got ${c.upper}`);
    if (rsIsK1(c.option)) {
      if (c.lower === null || !pos(c.lower)) throw new Error(`rolloutCorrection: ${c.option} needs a lower ratio bound > 0, got ${c.lower}`);
      if (c.lower > c.upper) throw new Error(`rolloutCorrection: ${c.option} lower bound ${c.lower} exceeds its upper bound ${c.upper}`);
    } else if (c.lower !== null) {
      throw new Error(`rolloutCorrection: ${c.option} takes an upper bound only (verl refuses "lower_upper" for k2 / k3)`);
    }
  }
}

/**
 * verl's threshold for one option from the number the page holds: k1 gets [1/u, u] unless a lower
 * bound is given (rollout_corr_helper.py L151–156), k2 / k3 the upper bound alone.
 */
export function rsCriterion(option: RolloutRsOption, upper: number, lower: number | null = null): RolloutRsCriterion {
  return { option, upper, lower: rsIsK1(option) ? (lower ?? 1 / upper) : null };
}

const clampLr = (x: number) => Math.min(LOG_RATIO_CLAMP, Math.max(-LOG_RATIO_CLAMP, x));

/** The three divergences of one token from its clamped log-ratio (k1 = −lr', k2 = ½lr'², k3 = e^{lr'} − 1 − lr'). */
export function rsDivergences(lr: number): [number, number, number] {
  const l = clampLr(lr);
  return [-l, 0.5 * l * l, Math.exp(l) - 1 - l];
}

const kIndex = (o: RolloutRsOption) => Number(o[o.length - 1]) - 1;

/** Each row's statistic for one sequence-level option (sum / mean / max of its k over the mask). */
function seqStat(option: RolloutRsOption, lr: ArrayLike<number>, mask: ArrayLike<number>, b: number, A: number): number {
  const k = kIndex(option);
  let sum = 0;
  let cnt = 0;
  let max = Number.NEGATIVE_INFINITY;
  for (let a = 0; a < A; a++) {
    const i = b * A + a;
    if (mask[i] === 0) continue;
    const v = rsDivergences(lr[i])[k];
    sum += v * mask[i];
    cnt += mask[i];
    max = Math.max(max, v);
  }
  if (option.startsWith('seq_sum')) return sum;
  if (option.startsWith('seq_mean')) return sum / (cnt + 1e-8);
  return max === Number.NEGATIVE_INFINITY ? 0 : max;
}

function passes(c: RolloutRsCriterion, stat: number): boolean {
  if (rsIsK1(c.option)) return stat >= Math.log(c.lower as number) && stat <= Math.log(c.upper);
  return stat <= c.upper;
}

export interface RolloutCorrectionOut {
  /** (B, A) stop-gradient IS weights, null when isLevel is null. */
  weights: Float64Array | null;
  /** (B, A) the response mask after rejection sampling: mask · Π keep. */
  keep: Float64Array;
}

/** (B, A) old, rollout, mask → IS weights and the rejection-sampled mask. */
export function rolloutCorrectionRef(
  old: ArrayLike<number>,
  rollout: ArrayLike<number>,
  mask: ArrayLike<number>,
  B: number,
  A: number,
  p: RolloutCorrectionParams,
): RolloutCorrectionOut {
  validateRolloutCorrectionParams(p);
  const n = B * A;
  const lr = new Float64Array(n);
  for (let i = 0; i < n; i++) if (mask[i] !== 0) lr[i] = old[i] - rollout[i];
  let weights: Float64Array | null = null;
  if (p.isLevel !== null) {
    weights = new Float64Array(n);
    for (let b = 0; b < B; b++) {
      let seq = 0;
      for (let a = 0; a < A; a++) seq += mask[b * A + a] === 0 ? 0 : lr[b * A + a] * mask[b * A + a];
      for (let a = 0; a < A; a++) {
        const i = b * A + a;
        if (mask[i] === 0) continue;
        const raw = mask[i] * Math.exp(clampLr(p.isLevel === 'token' ? lr[i] : seq));
        if (p.isLower !== null) weights[i] = raw >= p.isLower && raw <= p.isUpper ? raw : 0;
        else weights[i] = Math.max(Math.min(raw, p.isUpper), p.tisLower ?? 0);
      }
    }
  }
  const keep = Float64Array.from({ length: n }, (_, i) => mask[i]);
  for (const c of p.rs) {
    for (let b = 0; b < B; b++) {
      const rowStat = rsIsTokenLevel(c.option) ? 0 : seqStat(c.option, lr, mask, b, A);
      for (let a = 0; a < A; a++) {
        const i = b * A + a;
        if (mask[i] === 0) continue;
        const stat = rsIsTokenLevel(c.option) ? rsDivergences(lr[i])[kIndex(c.option)] : rowStat;
        if (!passes(c, stat)) keep[i] = 0;
      }
    }
  }
  return { weights, keep };
}

const maskedMean = (x: ArrayLike<number>, m: ArrayLike<number>) => {
  let s = 0;
  let c = 0;
  for (let i = 0; i < x.length; i++) {
    if (m[i] === 0) continue;
    s += x[i] * m[i];
    c += m[i];
  }
  return s / (c + 1e-8);
};

/**
 * verl's rollout_corr/ metrics for these weights and this mask (the names of
 * compute_is_metrics L563–690, the rejection fractions of compute_rollout_rejection_mask L380–400,
 * compute_offpolicy_metrics L785–900), the ones the page charts: IS mean/max/min, the fractions of
 * raw ratios above / below the thresholds, the std and effective sample size of the applied weights,
 * IcePop's out-of-band share; the rejected shares (token and sequence, overall and per option);
 * the off-policy KL, k3 KL and χ² at token and sequence level. Batch with at least one valid token.
 */
export function rolloutCorrMetricsRef(
  old: ArrayLike<number>,
  rollout: ArrayLike<number>,
  mask: ArrayLike<number>,
  B: number,
  A: number,
  p: RolloutCorrectionParams,
): Record<string, number> {
  const { weights, keep } = rolloutCorrectionRef(old, rollout, mask, B, A, p);
  const n = B * A;
  const out: Record<string, number> = {};
  const lr = Float64Array.from({ length: n }, (_, i) => (mask[i] === 0 ? 0 : old[i] - rollout[i]));
  const seqSum = Float64Array.from({ length: B }, (_, b) => lr.slice(b * A, b * A + A).reduce((s, x, a) => s + x * mask[b * A + a], 0));
  if (weights !== null) {
    const upper = p.isUpper;
    const lower = p.isLower ?? 1 / upper; // compute_is_metrics' default: the reciprocal of the upper bound
    const raw = Float64Array.from({ length: n }, (_, i) => (mask[i] === 0 ? 0 : mask[i] * Math.exp(clampLr(p.isLevel === 'token' ? lr[i] : seqSum[Math.floor(i / A)]))));
    out['rollout_corr/rollout_is_mean'] = maskedMean(weights, mask);
    if (p.isLevel === 'sequence') {
      // Sequence level: the extremes and threshold shares come from the row log-ratios (one per row).
      out['rollout_corr/rollout_is_max'] = Math.exp(Math.min(Math.max(...seqSum), LOG_RATIO_CLAMP));
      out['rollout_corr/rollout_is_min'] = Math.exp(Math.min(...seqSum));
      out['rollout_corr/rollout_is_ratio_fraction_high'] = seqSum.filter((s) => s > Math.log(upper)).length / B;
      out['rollout_corr/rollout_is_ratio_fraction_low'] = seqSum.filter((s) => s < Math.log(lower)).length / B;
    } else {
      out['rollout_corr/rollout_is_ratio_fraction_high'] = maskedMean(
        Array.from(raw, (w) => (w > upper ? 1 : 0)),
        mask,
      );
      out['rollout_corr/rollout_is_ratio_fraction_low'] = maskedMean(
        Array.from(raw, (w) => (w < lower ? 1 : 0)),
        mask,
      );
      let mx = Number.NEGATIVE_INFINITY;
      let mn = Number.POSITIVE_INFINITY;
      for (let i = 0; i < n; i++) {
        if (mask[i] === 0) continue;
        mx = Math.max(mx, weights[i]);
        mn = Math.min(mn, weights[i]);
      }
      out['rollout_corr/rollout_is_max'] = mx;
      out['rollout_corr/rollout_is_min'] = mn;
    }
    const clamped = Array.from(weights, (w) => Math.min(Math.max(w, 0), upper));
    const mean = maskedMean(clamped, mask);
    let count = 0;
    for (let i = 0; i < n; i++) count += mask[i];
    out['rollout_corr/rollout_is_std'] =
      count > 1
        ? Math.sqrt(
            Math.max(
              maskedMean(
                clamped.map((w) => w * w),
                mask,
              ) -
                mean * mean,
              0,
            ),
          )
        : 0;
    out['rollout_corr/rollout_is_eff_sample_size'] =
      1 /
      maskedMean(
        clamped.map((w) => (w / (mean + 1e-8)) ** 2),
        mask,
      );
    if (p.isLower !== null) {
      const lo = p.isLower;
      out['rollout_corr/rollout_is_oob_ratio'] = maskedMean(
        Array.from(raw, (w) => (w < lo || w > upper ? 1 : 0)),
        mask,
      );
    }
  }
  if (p.rs.length > 0) {
    let seqValid = 0;
    let seqDropped = 0;
    for (let b = 0; b < B; b++) {
      let valid = false;
      let dropped = false;
      for (let a = 0; a < A; a++) {
        const i = b * A + a;
        if (mask[i] === 0) continue;
        valid = true;
        if (keep[i] === 0) dropped = true;
      }
      if (valid) seqValid++;
      if (dropped) seqDropped++;
    }
    out['rollout_corr/rollout_rs_masked_fraction'] = maskedMean(
      Array.from(keep, (k, i) => (mask[i] === 0 ? 0 : 1 - k / mask[i])),
      mask,
    );
    out['rollout_corr/rollout_rs_seq_masked_fraction'] = B > 0 ? seqDropped / B : 0; // verl: over all rows
    for (const c of p.rs) {
      const one = rolloutCorrectionRef(old, rollout, mask, B, A, { ...p, isLevel: null, rs: [c] }).keep;
      let rowsDropped = 0;
      for (let b = 0; b < B; b++) {
        let dropped = false;
        for (let a = 0; a < A; a++) if (mask[b * A + a] !== 0 && one[b * A + a] === 0) dropped = true;
        if (dropped) rowsDropped++;
      }
      out[`rollout_corr/rollout_rs_${c.option}_masked_fraction`] = maskedMean(
        Array.from(one, (k, i) => (mask[i] === 0 ? 0 : 1 - k / mask[i])),
        mask,
      );
      out[`rollout_corr/rollout_rs_${c.option}_seq_masked_fraction`] = seqValid > 0 ? rowsDropped / seqValid : 0;
    }
  }
  // Off-policy diagnostics (always logged by verl).
  out['rollout_corr/kl'] = maskedMean(
    Array.from(lr, (x) => -x),
    mask,
  );
  out['rollout_corr/k3_kl'] = maskedMean(
    Array.from(lr, (x) => Math.exp(x) - x - 1),
    mask,
  );
  out['rollout_corr/chi2_token'] =
    maskedMean(
      Array.from(lr, (x) => Math.exp(2 * clampLr(x))),
      mask,
    ) - 1;
  out['rollout_corr/chi2_seq'] = seqSum.reduce((s, x) => s + Math.exp(2 * clampLr(x)), 0) / B - 1;
  return out;
}

/**
 * verl's rollout_is_threshold spec (_parse_rollout_is_threshold, L84–121): a number (or a numeric
 * string) is the TIS cap; "lower_upper" is the IcePop band.
 */
export function parseRolloutIsThreshold(spec: number | string): { upper: number; lower: number | null } {
  const number = (s: string) => {
    const x = Number(s.trim());
    if (s.trim() === '' || !Number.isFinite(x)) throw new Error(`rollout_is_threshold: "${spec}" is not a number or "lower_upper"`);
    return x;
  };
  let upper: number;
  let lower: number | null = null;
  if (typeof spec === 'number') upper = spec;
  else if (spec.includes('_')) {
    const at = spec.indexOf('_');
    lower = number(spec.slice(0, at));
    upper = number(spec.slice(at + 1));
  } else upper = number(spec);
  if (!(upper > 0)) throw new Error(`rollout_is_threshold: the upper bound must be > 0, got ${upper}`);
  if (lower !== null && !(lower > 0)) throw new Error(`rollout_is_threshold: the lower bound must be > 0, got ${lower}`);
  if (lower !== null && lower > upper) throw new Error(`rollout_is_threshold: the lower bound ${lower} exceeds the upper bound ${upper}`);
  return { upper, lower };
}

/**
 * verl's rollout_rs with its rollout_rs_threshold (_parse_rollout_rs_thresholds, L124–190): options
 * comma-separated (duplicates dropped), one threshold for all or one per option; k1 options take
 * "lower_upper" ratio bounds or u for [1/u, u], k2 / k3 an upper bound only.
 */
export function parseRolloutRs(rs: string, spec: number | string): RolloutRsCriterion[] {
  const options = [
    ...new Set(
      rs
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s),
    ),
  ];
  if (options.length === 0) throw new Error('rollout_rs: at least one option');
  for (const o of options) {
    if (!(ROLLOUT_RS_OPTIONS as readonly string[]).includes(o)) throw new Error(`rollout_rs: unknown option ${o}; one of ${ROLLOUT_RS_OPTIONS.join(', ')}`);
  }
  let specs =
    typeof spec === 'number'
      ? [String(spec)]
      : spec
          .split(',')
          .map((s) => s.trim())
          .filter((s) => s);
  if (specs.length !== 1 && specs.length !== options.length) {
    throw new Error(`rollout_rs_threshold: one threshold for all options or exactly ${options.length}, got ${specs.length}`);
  }
  if (specs.length === 1) specs = options.map(() => specs[0]);
  return options.map((o, j) => {
    const option = o as RolloutRsOption;
    const s = specs[j];
    const parts = s.split('_');
    const nums = parts.map(Number);
    if (parts.length > 2 || nums.some((x) => !Number.isFinite(x))) throw new Error(`rollout_rs_threshold: "${s}" for ${o} is not a number or "lower_upper"`);
    if (!rsIsK1(option) && parts.length === 2) throw new Error(`rollout_rs_threshold: ${o} takes an upper bound only, got "${s}"`);
    const c = parts.length === 2 ? { option, lower: nums[0], upper: nums[1] } : rsCriterion(option, nums[0]);
    validateRolloutCorrectionParams({ isLevel: null, isUpper: 1, isLower: null, tisLower: null, rs: [c] });
    return c;
  });
}
