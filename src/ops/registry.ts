// The one list of ops. Everything that enumerates ops is derived from it: `npm run kernel`'s names
// (KERNEL_NAMES), the fuzz campaign's kernels, `npm run bench`'s kernel rows, the page's WebGPU
// self-test and the kernels compiled ahead of use (declaredKernels). A new op is one line here.
import type { Backend } from '../backend/backend.ts';
import { actorLoss } from './actorLoss.ts';
import { aggregate } from './aggregate.ts';
import { covSelect } from './covSelect.ts';
import { gae } from './gae.ts';
import { groupAdvantages } from './groupAdvantages.ts';
import { gqaAttention, gqaAttentionBackward } from './gqaAttention.ts';
import { gqaAttentionCached } from './gqaAttentionCached.ts';
import { lmHeadLogits, lmHeadLogprobs, lmHeadLogprobsBackward } from './lmHead.ts';
import { sampleVocab } from './sampleVocab.ts';
import { InputError, type JsonInput } from './kernelInput.ts';
import { kl, klGrad } from './kl.ts';
import { logprobs, logprobsBackward } from './logprobs.ts';
import type { BenchCase, JsonKernel, OpSpec, SelftestCase } from './op.ts';
import { policyLoss } from './policyLoss.ts';
import { rolloutCorrection } from './rolloutCorrection.ts';
import { shapeRewards } from './shapeRewards.ts';
import { tisWeights } from './tisWeights.ts';
import { valueLoss } from './valueLoss.ts';
import { whiten } from './whiten.ts';

/** Any op, for lists (the argument and result types are each op's own). */
// biome-ignore lint/suspicious/noExplicitAny: a list of ops of different argument types
export type AnyOp = { readonly def: OpSpec<any, any> };

export const OPS: readonly AnyOp[] = [
  // PPO math: B sequences, A action positions, V vocabulary
  logprobs,
  logprobsBackward,
  kl,
  klGrad,
  shapeRewards,
  gae,
  whiten,
  groupAdvantages,
  policyLoss,
  valueLoss,
  aggregate,
  tisWeights,
  rolloutCorrection,
  covSelect,
  actorLoss,
  // Hugging Face models: grouped-query attention (full, backward, KV-cached), the large-vocabulary
  // head (log-probs, backward, logits) and sampling
  gqaAttention,
  gqaAttentionBackward,
  gqaAttentionCached,
  lmHeadLogprobs,
  lmHeadLogprobsBackward,
  lmHeadLogits,
  sampleVocab,
];

const JSON_KERNELS: readonly JsonKernel[] = OPS.flatMap((op) => (op.def.json ? [op.def.json] : []));

/** The kernels `npm run kernel` runs, by their command-line names. */
export const KERNEL_NAMES: readonly string[] = JSON_KERNELS.map((k) => k.name);

/** `npm run kernel <name>`: one op on a JSON object of named inputs; an InputError names a bad field. */
export function runKernel(be: Backend, name: string, input: JsonInput): Promise<Record<string, unknown>> {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) throw new InputError('the input must be a JSON object');
  const kernel = JSON_KERNELS.find((k) => k.name === name);
  if (!kernel) throw new InputError(`unknown kernel "${name}" (one of ${KERNEL_NAMES.join(', ')})`);
  return kernel.run(be, input);
}

/** `npm run bench -- --only kernels`: a row per op that has a bench case, in registry order. */
export const BENCH_CASES: readonly BenchCase[] = OPS.flatMap((op) => (op.def.bench ? [op.def.bench] : []));

/** The page's WebGPU self-test: the ops that have one, in registry order. */
export const SELFTESTS: readonly SelftestCase[] = OPS.flatMap((op) => (op.def.selftest ? [op.def.selftest] : []));
