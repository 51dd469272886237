// The one list of ops. Everything that enumerates ops is derived from it: the kernels compiled
// ahead of use (declaredKernels; modelKernels, those one model family needs), `npm run kernel`'s
// names (KERNEL_NAMES; the fuzz campaign runs them), `npm run bench`'s kernel rows and the page's
// WebGPU self-test. A new op is one line here, in its model family's list.
import type { Backend } from '../backend/backend.ts';
import { forAdapter, specKey, type KernelSpec } from '../gpu/pipelines.ts';
import { actorLoss } from './actorLoss.ts';
import { attention, attentionBackward } from './attention.ts';
import { attentionCached } from './attentionCached.ts';
import { aggregate } from './aggregate.ts';
import { covSelect } from './covSelect.ts';
import { decodeStep } from './decodeStep.ts';
import { add, axpy, fill, gelu, geluBackward, mul, scale } from './elementwise.ts';
import { embedding, embeddingBackward, embeddingWindow } from './embedding.ts';
import { embeddingRows, embeddingRowsBackward } from './embeddingRows.ts';
import { gae } from './gae.ts';
import { groupAdvantages } from './groupAdvantages.ts';
import { gqaAttention, gqaAttentionBackward } from './gqaAttention.ts';
import { gqaAttentionCached } from './gqaAttentionCached.ts';
import { InputError, type JsonInput } from './kernelInput.ts';
import { linear, linearBackward } from './linear.ts';
import { kl, klGrad } from './kl.ts';
import { layerNorm, layerNormBackward } from './layerNorm.ts';
import { lmHeadLogits, lmHeadLogprobs, lmHeadLogprobsBackward } from './lmHead.ts';
import { logprobs, logprobsBackward } from './logprobs.ts';
import { matmul, matmulBackward, matmulGelu, matmulResidual } from './matmul.ts';
import type { AnyOp, BenchCase, JsonKernel, SelftestCase } from './op.ts';
import { adamw, gradNorm } from './optim.ts';
import { policyLoss } from './policyLoss.ts';
import { rmsNorm, rmsNormBackward } from './rmsNorm.ts';
import { rolloutCorrection } from './rolloutCorrection.ts';
import { rope, ropeBackward } from './rope.ts';
import { sampleStep } from './sampleStep.ts';
import { sampleVocab } from './sampleVocab.ts';
import { shapeRewards } from './shapeRewards.ts';
import { gatherRows, gatherRowsMany, sliceSeq, sliceSeqBackward } from './slice.ts';
import { swiglu, swigluBackward, swigluFused, swigluFusedBackward } from './swiglu.ts';
import { tisWeights } from './tisWeights.ts';
import { valueLoss } from './valueLoss.ts';
import { whiten } from './whiten.ts';

/** The PPO math and the character model's layers: every op the page's trainer runs. */
const CHAR_MODEL_OPS: readonly AnyOp[] = [
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
  // Dense layers and the optimiser: (M, K) row-major activations
  matmul,
  matmulGelu,
  matmulResidual,
  matmulBackward,
  layerNorm,
  layerNormBackward,
  gelu,
  geluBackward,
  add,
  mul,
  axpy,
  scale,
  fill,
  embedding,
  embeddingWindow,
  embeddingBackward,
  sliceSeq,
  sliceSeqBackward,
  gatherRows,
  gatherRowsMany,
  gradNorm,
  adamw,
  // Sequence ops: causal attention (full and KV-cached), sampling, the fused decode step
  attention,
  attentionBackward,
  attentionCached,
  sampleStep,
  decodeStep,
];

/** The layers only Hugging Face model folders need (issue #31); GPT-2 folders run the character model's. */
const HF_MODEL_OPS: readonly AnyOp[] = [
  // Llama, Qwen2, Qwen3 layers: M rows of a hidden size D
  rmsNorm,
  rmsNormBackward,
  rope,
  ropeBackward,
  swiglu,
  swigluBackward,
  swigluFused,
  swigluFusedBackward,
  embeddingRows,
  embeddingRowsBackward,
  linear,
  linearBackward,
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

export const OPS: readonly AnyOp[] = [...CHAR_MODEL_OPS, ...HF_MODEL_OPS];

/**
 * The kind of model a trainer runs: the page's character model, or a Hugging Face folder (its
 * own layers beside the PPO math and the character model's, which GPT-2, LoRA and the LM head use).
 */
export type ModelFamily = 'char' | 'hf';

/** The fixed kernels of `ops`, each once (by specKey), in registry order: what to compile ahead for them. */
export function kernelsOf(ops: readonly AnyOp[]): KernelSpec[] {
  const byKey = new Map<string, KernelSpec>();
  for (const op of ops) for (const k of op.def.kernels) if (!byKey.has(specKey(k))) byKey.set(specKey(k), k);
  return [...byKey.values()];
}

/**
 * Every fixed kernel the ops declare; with `cpuAdapter`, only those that kind of adapter
 * dispatches. `be.precompile(declaredKernels())` builds them all; `be.precompile(kernelsOf([…]))`
 * first builds what a chosen set of ops needs.
 */
export function declaredKernels(cpuAdapter?: boolean): KernelSpec[] {
  return forAdapter(kernelsOf(OPS), cpuAdapter);
}

/**
 * The fixed kernels a model of `family` needs (with `cpuAdapter`, those that kind of adapter
 * dispatches): what the worker compiles ahead, so the character model's first chart point waits
 * for none of the Hugging Face kernels.
 */
export function modelKernels(family: ModelFamily, cpuAdapter?: boolean): KernelSpec[] {
  return forAdapter(kernelsOf(family === 'char' ? CHAR_MODEL_OPS : OPS), cpuAdapter);
}

const JSON_KERNELS: readonly JsonKernel[] = OPS.flatMap((op) => (op.def.json ? [op.def.json] : []));

/** The kernels `npm run kernel` runs, by their command-line names. */
export const KERNEL_NAMES: readonly string[] = JSON_KERNELS.map((k) => k.name);

/** `npm run kernel <name>`: one op on a JSON object of named inputs; an InputError names a bad field. */
export async function runKernel(be: Backend, name: string, input: JsonInput): Promise<Record<string, unknown>> {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) throw new InputError('the input must be a JSON object');
  const kernel = JSON_KERNELS.find((k) => k.name === name);
  if (!kernel) throw new InputError(`unknown kernel "${name}" (one of ${KERNEL_NAMES.join(', ')})`);
  return kernel.run(be, input);
}

/** `npm run bench -- --only kernels`: a row per op that has a bench case, in registry order. */
export const BENCH_CASES: readonly BenchCase[] = OPS.flatMap((op) => (op.def.bench ? [op.def.bench] : []));

/** The ops' self-test cases, in registry order (the page's worker takes them from src/ops/selftests.ts, checked equal). */
export const SELFTESTS: readonly SelftestCase[] = OPS.flatMap((op) => (op.def.selftest ? [op.def.selftest] : []));
