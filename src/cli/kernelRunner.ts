// Runs one named PPO kernel on any backend from a JSON-like input (see docs/algorithms.md, "Run one kernel").
import type { Backend } from '../backend/backend.ts';
import { GROUP_ESTIMATORS, KL_ESTIMATORS, LOSS_AGGS, LOSS_MODES, NORM_SCALES, POLICY_STATS, VALUE_STATS, type KlEstimator } from '../backend/ppoOps.ts';
import type { Tensor } from '../backend/tensor.ts';
import { gae } from '../ops/gae.ts';
import { COV_DEFAULTS, COV_LOSS_MODES, SAPO_TAU_NEG_DEFAULT, SAPO_TAU_POS_DEFAULT, type PolicyLossParams } from '../reference/policyLoss.ts';
import { BASELINE_ESTIMATORS, GROUPED_ESTIMATORS, type GroupEstimator } from '../reference/groupAdvantages.ts';
import { parseRolloutIsThreshold, parseRolloutRs, ROLLOUT_IS_LEVELS, rolloutCorrMetricsRef, type RolloutCorrectionParams } from '../reference/rolloutCorrection.ts';
import { boolField, choiceField, denseArray, InputError, maskField, nest, numberField, sameShape, type Dense } from './kernelInput.ts';

export const KERNEL_NAMES = [
  'logprobs',
  'kl',
  'shape_rewards',
  'gae',
  'whiten',
  'group_advantages',
  'policy_loss',
  'value_loss',
  'aggregate',
  'tis_weights',
  'rollout_correction',
] as const;
export type KernelName = (typeof KERNEL_NAMES)[number];

type Input = Record<string, unknown>;

/** The (B,T) tensors most kernels take, all checked against the first one's shape. */
function bt(be: Backend, input: Input, fields: string[]): { shape: number[]; tensors: Tensor[] } {
  const first = denseArray(input, fields[0], 2);
  const tensors = [be.tensor(first.data, first.shape)];
  for (const f of fields.slice(1)) {
    const d = denseArray(input, f, 2);
    sameShape(f, d, first.shape, fields[0]);
    tensors.push(be.tensor(d.data, d.shape));
  }
  return { shape: first.shape, tensors };
}

function mask(be: Backend, input: Input, shape: number[], against: string): Tensor {
  const m = maskField(input, 'mask', shape, against);
  return be.tensor(m.data, m.shape);
}

function scores(be: Backend, input: Input, B: number): Tensor {
  const s: Dense = denseArray(input, 'scores', 1);
  if (s.shape[0] !== B) throw new InputError(`field "scores": length ${s.shape[0]} does not match the batch size ${B}`);
  return be.tensor(s.data, s.shape);
}

/** `baselines` (B): ReMax's reward baseline per sequence (verl reward_baselines); required by remax, refused otherwise. */
function remaxBaselines(be: Backend, input: Input, estimator: GroupEstimator, B: number): Tensor | null {
  if (!BASELINE_ESTIMATORS.has(estimator)) {
    if ('baselines' in input && input.baselines !== null) throw new InputError(`field "baselines": only the remax estimator takes baselines (got estimator ${estimator})`);
    return null;
  }
  if (!('baselines' in input)) throw new InputError(`missing field "baselines": the ${estimator} estimator subtracts a reward baseline per sequence (verl reward_baselines)`);
  const d: Dense = denseArray(input, 'baselines', 1);
  if (d.shape[0] !== B) throw new InputError(`field "baselines": length ${d.shape[0]} does not match the batch size ${B}`);
  return be.tensor(d.data, [B]);
}

async function out(be: Backend, named: Record<string, Tensor>): Promise<Record<string, unknown>> {
  const names = Object.keys(named);
  const values = await be.readMany(names.map((n) => named[n]));
  const result: Record<string, unknown> = {};
  names.forEach((n, i) => {
    result[n] = nest(values[i], named[n].shape);
  });
  return result;
}

export async function runKernel(be: Backend, name: string, input: Input): Promise<Record<string, unknown>> {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) throw new InputError('the input must be a JSON object');
  switch (name as KernelName) {
    case 'logprobs': {
      const logits = denseArray(input, 'logits', 3);
      const tokens = denseArray(input, 'tokens', 2, { integer: true });
      const [B, T, V] = logits.shape;
      sameShape('tokens', tokens, [B, T], 'logits (first two dimensions)');
      tokens.data.forEach((t, i) => {
        if (t < 0 || t >= V) throw new InputError(`field "tokens": element ${i} is ${t}, outside the vocabulary [0, ${V - 1}]`);
      });
      const temperature = numberField(input, 'temperature', { min: 0, exclusiveMin: true })!;
      const r = be.ppo.logprobs(be.tensor(logits.data, logits.shape), be.tensor(tokens.data, tokens.shape, 'i32'), temperature);
      return out(be, { logprobs: r.logprobs, entropy: r.entropy });
    }
    case 'kl': {
      const { tensors } = bt(be, input, ['logprobs', 'ref_logprobs']);
      const estimator = choiceField(input, 'estimator', KL_ESTIMATORS);
      return out(be, { kl: be.ppo.kl(tensors[0], tensors[1], estimator), kl_grad: be.ppo.klGrad(tensors[0], tensors[1], estimator) });
    }
    case 'shape_rewards': {
      const { shape, tensors } = bt(be, input, ['logprobs', 'ref_logprobs']);
      const m = mask(be, input, shape, 'logprobs');
      const beta = numberField(input, 'beta', { min: 0 })!;
      const estimator = choiceField(input, 'estimator', KL_ESTIMATORS);
      const r = be.ppo.shapeRewards(scores(be, input, shape[0]), tensors[0], tensors[1], m, beta, estimator);
      return out(be, { rewards: r.rewards, kl: r.kl });
    }
    case 'gae': {
      const { shape, tensors } = bt(be, input, ['rewards', 'values']);
      const m = mask(be, input, shape, 'rewards');
      const gamma = numberField(input, 'gamma', { min: 0, max: 1 })!;
      const lam = numberField(input, 'lam', { min: 0, max: 1 })!;
      const r = gae(be, { rewards: tensors[0], values: tensors[1], actionMask: m, gamma, lam });
      return out(be, { advantages: r.advantages, returns: r.returns });
    }
    case 'whiten': {
      const { shape, tensors } = bt(be, input, ['values']);
      const m = mask(be, input, shape, 'values');
      return out(be, { whitened: be.ppo.whiten(tensors[0], m, boolField(input, 'shift_mean')) });
    }
    case 'group_advantages': {
      const estimator = choiceField(input, 'estimator', GROUP_ESTIMATORS);
      const { shape, tensors } = bt(be, input, ['logprobs', 'ref_logprobs']);
      const m = mask(be, input, shape, 'logprobs');
      const group = denseArray(input, 'group', 1, { integer: true });
      if (group.shape[0] !== shape[0]) throw new InputError(`field "group": length ${group.shape[0]} does not match the batch size ${shape[0]}`);
      if (GROUPED_ESTIMATORS.has(estimator)) {
        // The baselines compare samples of one prompt: a group of one has nothing to compare with.
        const sizes = new Map<number, number>();
        for (const g of group.data) sizes.set(g, (sizes.get(g) ?? 0) + 1);
        for (const [g, n] of sizes) if (n < 2) throw new InputError(`field "group": group ${g} has ${n} sample; the ${estimator} estimator needs at least 2 per group`);
      }
      const r = be.ppo.groupAdvantages({
        estimator,
        scores: scores(be, input, shape[0]),
        group: group.data,
        logprobs: tensors[0],
        refLogprobs: tensors[1],
        actionMask: m,
        beta: numberField(input, 'beta', { min: 0 })!,
        klEstimator: choiceField<KlEstimator>(input, 'kl_estimator', KL_ESTIMATORS, 'k1'),
        gamma: numberField(input, 'gamma', { min: 0, max: 1 })!,
        baselines: remaxBaselines(be, input, estimator, shape[0]),
      });
      return out(be, { advantages: r.advantages, returns: r.returns });
    }
    case 'policy_loss': {
      const { shape, tensors } = bt(be, input, ['old_logprobs', 'logprobs', 'advantages']);
      const m = mask(be, input, shape, 'old_logprobs');
      const clipC = numberField(input, 'clip_c', { optional: true });
      if (clipC !== null && clipC <= 1) throw new InputError(`field "clip_c": ${clipC} is out of range (the dual-clip constant must be > 1)`);
      let isWeights: Tensor | null = null;
      if ('is_weights' in input && input.is_weights !== null) {
        const w = denseArray(input, 'is_weights', 2);
        sameShape('is_weights', w, shape, 'old_logprobs');
        isWeights = be.tensor(w.data, w.shape);
      }
      const covSeed = numberField(input, 'cov_seed', { min: 0, max: 0xffffffff, optional: true });
      if (covSeed !== null && !Number.isInteger(covSeed)) throw new InputError(`field "cov_seed": ${covSeed} is not an integer (a u32 seed)`);
      const params: PolicyLossParams = {
        clipLow: numberField(input, 'clip_low', { min: 0, exclusiveMin: true })!,
        clipHigh: numberField(input, 'clip_high', { min: 0, exclusiveMin: true })!,
        clipC,
        agg: choiceField(input, 'agg', LOSS_AGGS, 'token-mean'),
        lossMode: choiceField(input, 'loss_mode', LOSS_MODES, 'vanilla'),
        normScale: choiceField(input, 'norm_scale', NORM_SCALES, 'per_seq'),
        // SAPO's gate temperatures (verl actor.tau_pos / tau_neg); read by loss_mode sapo only
        sapoTauPos: numberField(input, 'tau_pos', { min: 0, exclusiveMin: true, optional: true }) ?? SAPO_TAU_POS_DEFAULT,
        sapoTauNeg: numberField(input, 'tau_neg', { min: 0, exclusiveMin: true, optional: true }) ?? SAPO_TAU_NEG_DEFAULT,
        // Clip-Cov / KL-Cov (verl policy_loss.*, verl's defaults when absent); cov_seed ranks clip_cov's band
        clipCovRatio: numberField(input, 'clip_cov_ratio', { min: 0, exclusiveMin: true, optional: true }) ?? COV_DEFAULTS.clipCovRatio,
        clipCovLb: numberField(input, 'clip_cov_lb', { optional: true }) ?? COV_DEFAULTS.clipCovLb,
        clipCovUb: numberField(input, 'clip_cov_ub', { optional: true }) ?? COV_DEFAULTS.clipCovUb,
        klCovRatio: numberField(input, 'kl_cov_ratio', { min: 0, exclusiveMin: true, optional: true }) ?? COV_DEFAULTS.klCovRatio,
        ppoKlCoef: numberField(input, 'ppo_kl_coef', { min: 0, optional: true }) ?? COV_DEFAULTS.ppoKlCoef,
        covSeed: covSeed ?? 0,
      };
      const r = be.ppo.policyLoss(tensors[0], tensors[1], tensors[2], m, params, isWeights);
      const cov = COV_LOSS_MODES.includes(params.lossMode ?? 'vanilla');
      // clip_cov / kl_cov also return the tokens they acted on (1 = picked), so a check against
      // verl can inject clip_cov's choice where verl draws torch.randperm.
      const sel = cov ? be.ppo.covSelect(tensors[0], tensors[1], tensors[2], m, params) : null;
      const [stats, grad, picked] = await be.readMany(sel ? [r.stats, r.gradLogprobs, sel] : [r.stats, r.gradLogprobs]);
      return {
        loss: stats[POLICY_STATS.loss],
        clipfrac: stats[POLICY_STATS.clipfrac],
        clipfrac_lower: stats[POLICY_STATS.clipfracLower],
        ppo_kl: stats[POLICY_STATS.ppoKl],
        grad_logprobs: nest(grad, shape),
        ...(picked ? { cov_selected: nest(picked, shape) } : {}),
      };
    }
    case 'value_loss': {
      const { shape, tensors } = bt(be, input, ['values', 'old_values', 'returns']);
      const m = mask(be, input, shape, 'values');
      const r = be.ppo.valueLoss(tensors[0], tensors[1], tensors[2], m, {
        clip: numberField(input, 'clip', { min: 0, exclusiveMin: true, optional: true }),
        agg: choiceField(input, 'agg', LOSS_AGGS, 'token-mean'),
        normScale: choiceField(input, 'norm_scale', NORM_SCALES, 'per_seq'),
      });
      const [stats, grad] = await be.readMany([r.stats, r.gradValues]);
      return { loss: stats[VALUE_STATS.loss], clipfrac: stats[VALUE_STATS.clipfrac], grad_values: nest(grad, shape) };
    }
    case 'aggregate': {
      const { shape, tensors } = bt(be, input, ['values']);
      const m = mask(be, input, shape, 'values');
      const r = be.ppo.aggregate(tensors[0], m, choiceField(input, 'agg', LOSS_AGGS), choiceField(input, 'norm_scale', NORM_SCALES, 'per_seq'));
      const [value, weights] = await be.readMany([r.value, r.weights]);
      return { value: value[0], weights: nest(weights, shape) };
    }
    case 'tis_weights': {
      const { shape, tensors } = bt(be, input, ['old_logprobs', 'rollout_logprobs']);
      const m = mask(be, input, shape, 'old_logprobs');
      const cap = numberField(input, 'cap', { min: 0, exclusiveMin: true })!;
      return out(be, { weights: be.ppo.tisWeights(tensors[0], tensors[1], m, cap) });
    }
    case 'rollout_correction': {
      // verl's argument names (compute_rollout_correction_and_rejection_mask) plus OpenRLHF's TIS floor.
      const { shape, tensors } = bt(be, input, ['old_logprobs', 'rollout_logprobs']);
      const m = mask(be, input, shape, 'old_logprobs');
      const spec = (field: string, fallback: number | null): number | string | null => {
        const v = input[field];
        if (v === undefined || v === null) return fallback;
        if (typeof v !== 'number' && typeof v !== 'string') throw new InputError(`field "${field}": a number or a "lower_upper" string`);
        return v;
      };
      const level = input.rollout_is === undefined || input.rollout_is === null ? null : choiceField(input, 'rollout_is', ROLLOUT_IS_LEVELS);
      const rs = input.rollout_rs === undefined || input.rollout_rs === null ? null : input.rollout_rs;
      if (rs !== null && typeof rs !== 'string') throw new InputError('field "rollout_rs": comma-separated options such as "token_k1,seq_mean_k3"');
      let params: RolloutCorrectionParams;
      try {
        const is = parseRolloutIsThreshold(spec('rollout_is_threshold', 2) as number | string);
        const rsSpec = spec('rollout_rs_threshold', null);
        if (rs !== null && rsSpec === null) throw new Error('rollout_rs_threshold: needed with rollout_rs');
        params = {
          isLevel: level,
          isUpper: is.upper,
          isLower: is.lower,
          tisLower: numberField(input, 'tis_lower', { min: 0, optional: true }),
          rs: rs === null ? [] : parseRolloutRs(rs, rsSpec as number | string),
        };
      } catch (e) {
        throw new InputError((e as Error).message);
      }
      const r = be.ppo.rolloutCorrection(tensors[0], tensors[1], m, params);
      const host = await out(be, { response_mask: r.keep, ...(r.weights ? { rollout_is_weights: r.weights } : {}) });
      const [old, rollout, mk] = await be.readMany([tensors[0], tensors[1], m]);
      // verl's rollout_corr/ metrics (host float64, src/reference/rolloutCorrection.ts), next to the tensors.
      const metrics = mk.some((x) => x !== 0) ? rolloutCorrMetricsRef(old, rollout, mk, shape[0], shape[1], params) : {};
      return { ...host, ...metrics };
    }
    default:
      throw new InputError(`unknown kernel "${name}" (one of ${KERNEL_NAMES.join(', ')})`);
  }
}
