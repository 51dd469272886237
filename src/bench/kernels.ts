// PPO kernel benchmarks: each op at the S and M benchmark sizes (KERNEL_SIZES below), WebGPU beside the
// float64 CPU reference in the same run.
import type { Backend } from '../backend/backend.ts';
import type { Tensor } from '../backend/tensor.ts';
import { gae } from '../ops/gae.ts';
import { Rng } from '../util/rng.ts';
import { timeIt, type Timed } from './timing.ts';

export interface KernelSize {
  name: string;
  B: number;
  A: number;
  V: number;
}

export const KERNEL_SIZES: KernelSize[] = [
  { name: 'S', B: 16, A: 16, V: 32 },
  { name: 'M', B: 32, A: 32, V: 32 },
];

interface Inputs {
  logits: Tensor;
  tokens: Tensor;
  logp: Tensor;
  old: Tensor;
  ref: Tensor;
  values: Tensor;
  oldValues: Tensor;
  rewards: Tensor;
  adv: Tensor;
  mask: Tensor;
  scores: Tensor;
  group: number[];
}

function makeInputs(be: Backend, s: KernelSize, seed: number): Inputs {
  const r = new Rng(seed);
  const n = s.B * s.A;
  const arr = (k: number, f: () => number) => Float64Array.from({ length: k }, f);
  const mask = new Float64Array(n);
  for (let b = 0; b < s.B; b++) {
    const len = r.int(1, s.A + 1);
    for (let a = 0; a < len; a++) mask[b * s.A + a] = 1;
  }
  return {
    logits: be.tensor(
      arr(n * s.V, () => r.normal() * 3),
      [s.B, s.A, s.V],
    ),
    tokens: be.tensor(
      arr(n, () => r.int(0, s.V)),
      [s.B, s.A],
      'i32',
    ),
    logp: be.tensor(
      arr(n, () => -Math.abs(r.normal())),
      [s.B, s.A],
    ),
    old: be.tensor(
      arr(n, () => -Math.abs(r.normal())),
      [s.B, s.A],
    ),
    ref: be.tensor(
      arr(n, () => -Math.abs(r.normal())),
      [s.B, s.A],
    ),
    values: be.tensor(
      arr(n, () => r.normal()),
      [s.B, s.A],
    ),
    oldValues: be.tensor(
      arr(n, () => r.normal()),
      [s.B, s.A],
    ),
    rewards: be.tensor(
      arr(n, () => r.normal()),
      [s.B, s.A],
    ),
    adv: be.tensor(
      arr(n, () => r.normal()),
      [s.B, s.A],
    ),
    mask: be.tensor(mask, [s.B, s.A]),
    scores: be.tensor(
      arr(s.B, () => r.normal()),
      [s.B],
    ),
    group: Array.from({ length: s.B }, (_, i) => Math.floor(i / 4)),
  };
}

type Op = (be: Backend, x: Inputs) => Tensor[];

const OPS: [string, Op][] = [
  ['logprobs (fwd)', (be, x) => Object.values(be.ppo.logprobs(x.logits, x.tokens, 0.9))],
  ['logprobs (bwd)', (be, x) => [be.ppo.logprobsBackward(x.logits, x.tokens, 0.9, x.adv, x.values)]],
  ['kl k3', (be, x) => [be.ppo.kl(x.logp, x.ref, 'k3')]],
  ['shape_rewards', (be, x) => Object.values(be.ppo.shapeRewards(x.scores, x.logp, x.ref, x.mask, 0.05, 'k1'))],
  ['gae', (be, x) => Object.values(gae(be, { rewards: x.rewards, values: x.values, actionMask: x.mask, gamma: 1, lam: 0.95 }))],
  ['whiten', (be, x) => [be.ppo.whiten(x.adv, x.mask, true)]],
  [
    'group_advantages grpo',
    (be, x) =>
      Object.values(
        be.ppo.groupAdvantages({
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
      ),
  ],
  ['policy_loss', (be, x) => Object.values(be.ppo.policyLoss(x.old, x.logp, x.adv, x.mask, { clipLow: 0.2, clipHigh: 0.28, clipC: 3, agg: 'token-mean' }))],
  ['value_loss', (be, x) => Object.values(be.ppo.valueLoss(x.values, x.oldValues, x.rewards, x.mask, { clip: 0.2, agg: 'token-mean' }))],
];

export interface KernelRow {
  op: string;
  size: string;
  gpu: Timed;
  cpu: Timed;
}

export async function benchKernels(gpuBe: Backend, cpuBe: Backend, sizes: string[] = KERNEL_SIZES.map((k) => k.name)): Promise<KernelRow[]> {
  const rows: KernelRow[] = [];
  for (const size of KERNEL_SIZES.filter((k) => sizes.includes(k.name))) {
    const gx = makeInputs(gpuBe, size, 7);
    const cx = makeInputs(cpuBe, size, 7);
    for (const [name, op] of OPS) {
      const gpu = await timeIt(gpuBe, () => gpuBe.dispose(...op(gpuBe, gx)));
      const cpu = await timeIt(cpuBe, () => cpuBe.dispose(...op(cpuBe, cx)));
      rows.push({ op: name, size: size.name, gpu, cpu });
    }
  }
  return rows;
}
