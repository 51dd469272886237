// The integer codes the WGSL kernels branch on, and the numeric limits kernels share with their
// float64 references, in one place. Each table maps a name the config,
// the backends and the page use ('k3', 'rloo', 'gspo', …) to the u32 a kernel's uniform carries;
// the shader loader (src/gpu/shaders.ts) writes each table out as WGSL `const` declarations
// (`const KL_K3: u32 = 3u;`), so the shaders branch on these names and never copy a number.
// tests/unit/kernel_codes.test.ts checks that every generated name is used and no shader compares
// a coded field with a literal.
import type { NormScale, PolicyAgg } from './aggregate.ts';
import { GROUP_ESTIMATOR_SPECS, GROUP_ESTIMATORS, type GroupEstimator } from './groupAdvantages.ts';
import { KL_K3_CLAMP, KL_LOG_RATIO_CLAMP, type KlEstimator } from './kl.ts';
import { GSPO_LOG_RATIO_MAX, LOG_RATIO_CLAMP, type LossMode } from './policyLoss.ts';
import type { RolloutIsLevel, RolloutRsOption } from './rolloutCorrection.ts';

/** KL estimator (shaders/lib_kl.wgsl kl_value, kl_grad; `estimator` of kl.wgsl and rewards.wgsl). */
export const KL_ESTIMATOR_CODE = { k1: 0, abs: 1, k2: 2, k3: 3, 'k1+': 4, 'k3+': 5, k1_clamped: 6 } as const satisfies Record<KlEstimator, number>;

/** Outcome-reward estimator (shaders/group_advantages.wgsl `estimator`); the code is its spec row's. */
export const GROUP_ESTIMATOR_CODE = Object.fromEntries(GROUP_ESTIMATORS.map((e) => [e, GROUP_ESTIMATOR_SPECS[e].code])) as Record<GroupEstimator, number>;

/** Policy-loss family (`mode` of shaders/policy_loss.wgsl and actor_loss.wgsl, read by lib_policy_term.wgsl). */
export const LOSS_MODE_CODE = { vanilla: 0, gspo: 1, cispo: 2, sapo: 3, gpg: 4, geo_mean: 5, clip_cov: 6, kl_cov: 7 } as const satisfies Record<LossMode, number>;

/** Rollout-correction IS level (`is_level` of shaders/tis.wgsl rollout_correction); off = no weights. */
export const ROLLOUT_IS_LEVEL_CODE = { off: 0, token: 1, sequence: 2 } as const satisfies Record<RolloutIsLevel | 'off', number>;

/** Rejection-sampling criterion (`rs0..rs3` of shaders/tis.wgsl rollout_correction), verl's option names. */
export const ROLLOUT_RS_CODE = {
  token_k1: 0,
  token_k2: 1,
  token_k3: 2,
  seq_sum_k1: 3,
  seq_sum_k2: 4,
  seq_sum_k3: 5,
  seq_mean_k1: 6,
  seq_mean_k2: 7,
  seq_mean_k3: 8,
  seq_max_k2: 9,
  seq_max_k3: 10,
} as const satisfies Record<RolloutRsOption, number>;

/**
 * Aggregation (shaders/aggregate.wgsl agg_finalize `agg`): the four verl modes, with
 * seq-mean-token-sum-norm split by its norm scale ('per_seq' ÷ B·A, 'verl' ÷ A), and geo_mean's
 * seq-mean-token-mean-all-rows (÷ B, empty rows counted).
 */
export const AGG_CODE = {
  'token-mean': 0,
  'seq-mean-token-mean': 1,
  'seq-mean-token-sum-norm': 2,
  'seq-mean-token-sum': 3,
  'seq-mean-token-sum-norm-verl': 4,
  'seq-mean-token-mean-all-rows': 5,
} as const;

/** Kernel code of an aggregation and its norm scale (the scale matters only to seq-mean-token-sum-norm). */
export function aggCode(agg: PolicyAgg, normScale: NormScale = 'per_seq'): number {
  return agg === 'seq-mean-token-sum-norm' && normScale === 'verl' ? AGG_CODE['seq-mean-token-sum-norm-verl'] : AGG_CODE[agg];
}

/** Every coded enum with the prefix of its WGSL names: 'k1+' of KL_ becomes `KL_K1_PLUS`. */
export const WGSL_ENUMS: readonly { prefix: string; codes: Readonly<Record<string, number>> }[] = [
  { prefix: 'KL_', codes: KL_ESTIMATOR_CODE },
  { prefix: 'ADV_', codes: GROUP_ESTIMATOR_CODE },
  { prefix: 'LOSS_MODE_', codes: LOSS_MODE_CODE },
  { prefix: 'AGG_', codes: AGG_CODE },
  { prefix: 'IS_LEVEL_', codes: ROLLOUT_IS_LEVEL_CODE },
  { prefix: 'RS_', codes: ROLLOUT_RS_CODE },
];

/** WGSL identifier of one code: prefix + the name upper-cased, '+' spelled PLUS, '-' as '_'. */
export function wgslCodeName(prefix: string, name: string): string {
  return prefix + name.replace(/\+/g, '_plus').replace(/-/g, '_').toUpperCase();
}

/**
 * Limits a kernel must apply exactly as its float64 reference does, declared into WGSL as f32
 * constants under the reference's own names (`const LOG_RATIO_CLAMP: f32 = 20.0;`).
 */
export const WGSL_F32_LIMITS: Readonly<Record<string, number>> = { LOG_RATIO_CLAMP, GSPO_LOG_RATIO_MAX, KL_LOG_RATIO_CLAMP, KL_K3_CLAMP };

/** Every generated WGSL constant, name → value. */
export function wgslCodes(): Map<string, number> {
  const out = new Map<string, number>();
  for (const { prefix, codes } of WGSL_ENUMS) {
    for (const [name, code] of Object.entries(codes)) out.set(wgslCodeName(prefix, name), code);
  }
  return out;
}
