// Outcome-reward advantage estimators (GRPO, RLOO, REINFORCE(++), ReMax, Dr. GRPO, OPO, pass@k):
// a score transform per group, token rewards with KL, discounted returns. Math:
// shaders/group_advantages.wgsl's header; float64 reference: src/reference/groupAdvantages.ts.
import type { GpuOpsHost } from '../backend/backend.ts';
import type { Tensor } from '../backend/tensor.ts';
import { expectShape } from '../backend/tensor.ts';
import { cpu, CpuTensor } from '../backend/cpu/cpuTensor.ts';
import { gpu, GpuTensor, gpuTensor } from '../backend/webgpu/gpuTensor.ts';
import { kernel } from '../gpu/pipelines.ts';
import { groups } from '../gpu/runtime.ts';
import { uniformLayout } from '../gpu/uniforms.ts';
import {
  BASELINE_ESTIMATORS,
  checkBaselines,
  compactGroups,
  GROUP_ESTIMATORS,
  GROUPED_ESTIMATORS,
  groupAdvantagesRef,
  klSummedIntoScore,
  WHITENED_GROUP_ESTIMATORS,
  type GroupEstimator,
  type GroupKlOrder,
} from '../reference/groupAdvantages.ts';
import { GROUP_ESTIMATOR_CODE } from '../reference/kernelCodes.ts';
import { KL_ESTIMATORS, type KlEstimator } from '../reference/kl.ts';
import { bt, choiceField, denseArray, InputError, jsonOutputs, maskTensor, numberField, scoresTensor, type JsonInput } from './kernelInput.ts';
import { defineOp, type Op } from './op.ts';
import { expectBA } from './shapes.ts';
import { shapeRewards } from './shapeRewards.ts';
import { whiten } from './whiten.ts';
import type { Backend } from '../backend/backend.ts';

export interface GroupAdvantagesArgs {
  estimator: GroupEstimator;
  scores: Tensor; // (B) f32, one score per response
  /** (B) group id per response, on the host, so a group of one sample is rejected before any GPU work. */
  group: ArrayLike<number>;
  logprobs: Tensor; // (B, A) f32
  refLogprobs: Tensor; // (B, A) f32
  actionMask: Tensor; // (B, A) f32
  beta: number; // KL coefficient β
  klEstimator: KlEstimator;
  gamma: number; // discount γ
  /** 'verl': score − β·ΣKL per response before the group statistics (GROUP_KL_ORDERS); default 'openrlhf'. */
  klOrder?: GroupKlOrder;
  /** (B) reward baseline per response: required by remax (its prompt's greedy reward), ignored otherwise. */
  baselines?: Tensor | null;
}

export interface GroupAdvantagesResult {
  advantages: Tensor; // (B, A) f32, 0 at every masked position
  returns: Tensor; // (B, A) f32
}

const WG = 64;
const GROUP_UNIFORM = uniformLayout('Params', { B: 'u32', A: 'u32', gamma: 'f32', estimator: 'u32' });
// group_scores also reads the baselines (ReMax) and the action mask (OPO's lengths); mask_advantages the baselines.
const GROUP_SCORES = kernel({ shader: 'group_advantages', entry: 'group_scores', uniform: GROUP_UNIFORM, storage: ['read', 'read', 'rw', 'read', 'read'], constants: { WG } });
const DISCOUNTED_RETURNS = kernel({ ...GROUP_SCORES, entry: 'discounted_returns', storage: ['read', 'read', 'rw'] });
const MASK_ADVANTAGES = kernel({ ...GROUP_SCORES, entry: 'mask_advantages', storage: ['read', 'read', 'rw', 'read'] });

/** Σ_t of the shaped token rewards per row (B): score − β·Σ_t mask·KL_t, with the kernels that exist. */
function sequenceScores(be: GpuOpsHost, a: GroupAdvantagesArgs): Tensor {
  const { scores, logprobs, refLogprobs, actionMask } = a;
  const [B, A] = logprobs.shape;
  const { rewards, kl } = shapeRewards(be, { scores, logprobs, refLogprobs, actionMask, beta: a.beta, estimator: a.klEstimator });
  const sums = be.empty([B, A]);
  // γ = 1: the returns at t = 0 are the row sums (masked positions carry the sum through).
  be.rt.dispatch(DISCOUNTED_RETURNS, [gpu(rewards), gpu(actionMask), gpu(sums)], { B, A, gamma: 1, estimator: 0 }, [groups(B, WG)]);
  // Column 0 of the (B, A) sums: a (B·A, 1) handle on the same buffer, gathered at rows b·A.
  const g = gpuTensor(sums);
  const cells = new GpuTensor(g.buffer, [B * A, 1], 'f32', g.offset, true);
  const firstColumn = be.tensor(
    Int32Array.from({ length: B }, (_, b) => b * A),
    [B],
    'i32',
  );
  const out = be.nn.gatherRows(cells, firstColumn); // (B, 1): GROUP_SCORES reads it as (B)
  // Safe to recycle at once: later users of these buffers are recorded (and so run) after these reads.
  be.dispose(rewards, kl, sums, firstColumn);
  return out;
}

/** `baselines` (B): ReMax's reward baseline per sequence (verl reward_baselines); required by remax, refused otherwise. */
function remaxBaselines(be: Backend, input: JsonInput, estimator: GroupEstimator, B: number): Tensor | null {
  if (!BASELINE_ESTIMATORS.has(estimator)) {
    if ('baselines' in input && input.baselines !== null) throw new InputError(`field "baselines": only the remax estimator takes baselines (got estimator ${estimator})`);
    return null;
  }
  if (!('baselines' in input)) throw new InputError(`missing field "baselines": the ${estimator} estimator subtracts a reward baseline per sequence (verl reward_baselines)`);
  const d = denseArray(input, 'baselines', 1);
  if (d.shape[0] !== B) throw new InputError(`field "baselines": length ${d.shape[0]} does not match the batch size ${B}`);
  return be.tensor(d.data, [B]);
}

/**
 * Score transform by group, then token rewards with KL (as shapeRewards; with klOrder 'verl' the
 * KL is summed into the score before the transform instead, and the token rewards carry none),
 * then discounted cumulative returns (masked positions carry through) as advantages; whitened
 * (shift_mean) for reinforce and reinforce_baseline; remax subtracts its baseline from the returns;
 * advantages are 0 at every masked position (verl multiplies by the response mask).
 */
export const groupAdvantages: Op<GroupAdvantagesArgs, GroupAdvantagesResult> = defineOp({
  name: 'groupAdvantages',
  kernels: [GROUP_SCORES, DISCOUNTED_RETURNS, MASK_ADVANTAGES],
  check(args) {
    const [B] = expectBA(['logprobs', args.logprobs], ['ref_logprobs', args.refLogprobs], ['action_mask', args.actionMask]);
    expectShape('scores', args.scores, [B]);
    // A group of one sample (where the estimator needs two) is rejected here, before any work.
    compactGroups(args.group, B, args.estimator);
    if (args.baselines) expectShape('baselines', args.baselines, [B]);
    checkBaselines(args.estimator, args.baselines ? { length: args.baselines.shape[0] } : null, B);
  },
  cpu(args) {
    const [B, A] = args.logprobs.shape;
    const r = groupAdvantagesRef({
      ...args,
      scores: cpu(args.scores).data,
      logprobs: cpu(args.logprobs).data,
      refLogprobs: cpu(args.refLogprobs).data,
      actionMask: cpu(args.actionMask).data,
      baselines: args.baselines ? cpu(args.baselines).data : null,
      B,
      A,
    });
    return { advantages: new CpuTensor(r.advantages, [B, A], 'f32'), returns: new CpuTensor(r.returns, [B, A], 'f32') };
  },
  webgpu(args, be) {
    const { estimator, scores, logprobs, refLogprobs, actionMask } = args;
    const [B, A] = logprobs.shape;
    // Validation (a group of one sample) throws here, before anything is recorded.
    const compact = compactGroups(args.group, B, estimator);
    checkBaselines(estimator, args.baselines ? { length: args.baselines.size } : null, B);
    // Without a baseline (every estimator but remax) its binding gets the scores: read-only aliasing, not read.
    const baselines = BASELINE_ESTIMATORS.has(estimator) && args.baselines ? args.baselines : scores;
    const groupIndex = be.tensor(compact.index, [B], 'i32');
    const transformed = be.empty([B]);
    const ug = { B, A, gamma: args.gamma, estimator: GROUP_ESTIMATOR_CODE[estimator] };
    // verl's order: the score of each response is Σ_t of its shaped token rewards (score − β·ΣKL),
    // read off an undiscounted returns scan at t = 0; only this order pays for the extra dispatches.
    const summed = klSummedIntoScore(estimator, args.klOrder, args.beta);
    const seqScores = summed ? sequenceScores(be, args) : scores;
    be.rt.dispatch(GROUP_SCORES, [gpu(seqScores), gpu(groupIndex), gpu(transformed), gpu(baselines), gpu(actionMask)], ug, [groups(B, WG)]);
    if (seqScores !== scores) be.dispose(seqScores);
    const { rewards, kl } = shapeRewards(be, { scores: transformed, logprobs, refLogprobs, actionMask, beta: summed ? 0 : args.beta, estimator: args.klEstimator });
    const returns = be.empty([B, A]);
    be.rt.dispatch(DISCOUNTED_RETURNS, [gpu(rewards), gpu(actionMask), gpu(returns)], ug, [groups(B, WG)]);
    const unmasked = WHITENED_GROUP_ESTIMATORS.has(estimator) ? whiten(be, { x: returns, actionMask, shiftMean: true }) : returns;
    // verl multiplies every outcome estimator's advantages by the response mask: 0 at padding.
    const advantages = be.empty([B, A]);
    be.rt.dispatch(MASK_ADVANTAGES, [gpu(unmasked), gpu(actionMask), gpu(advantages), gpu(baselines)], ug, [groups(B * A, WG)]);
    // Safe to recycle at once: later users of these buffers are recorded (and so run) after these reads.
    be.dispose(groupIndex, transformed, rewards, kl);
    if (unmasked !== returns) be.dispose(unmasked);
    return { advantages, returns };
  },
  json: {
    name: 'group_advantages',
    async run(be, input) {
      const estimator = choiceField(input, 'estimator', GROUP_ESTIMATORS);
      const { shape, tensors } = bt(be, input, ['logprobs', 'ref_logprobs']);
      const actionMask = maskTensor(be, input, shape, 'logprobs');
      const group = denseArray(input, 'group', 1, { integer: true });
      if (group.shape[0] !== shape[0]) throw new InputError(`field "group": length ${group.shape[0]} does not match the batch size ${shape[0]}`);
      if (GROUPED_ESTIMATORS.has(estimator)) {
        // The baselines compare samples of one prompt: a group of one has nothing to compare with.
        const sizes = new Map<number, number>();
        for (const g of group.data) sizes.set(g, (sizes.get(g) ?? 0) + 1);
        for (const [g, n] of sizes) if (n < 2) throw new InputError(`field "group": group ${g} has ${n} sample; the ${estimator} estimator needs at least 2 per group`);
      }
      const r = groupAdvantages(be, {
        estimator,
        scores: scoresTensor(be, input, shape[0]),
        group: group.data,
        logprobs: tensors[0],
        refLogprobs: tensors[1],
        actionMask,
        beta: numberField(input, 'beta', { min: 0 })!,
        klEstimator: choiceField<KlEstimator>(input, 'kl_estimator', KL_ESTIMATORS, 'k1'),
        gamma: numberField(input, 'gamma', { min: 0, max: 1 })!,
        baselines: remaxBaselines(be, input, estimator, shape[0]),
      });
      return jsonOutputs(be, { advantages: r.advantages, returns: r.returns });
    },
  },
  bench: {
    label: 'group_advantages grpo',
    run: (be, x) =>
      groupAdvantages(be, {
        estimator: 'group_norm',
        scores: x.scores,
        group: x.group,
        logprobs: x.logp,
        refLogprobs: x.ref,
        actionMask: x.mask,
        beta: 0.05,
        klEstimator: 'k1',
        gamma: 1,
      }),
  },
});
