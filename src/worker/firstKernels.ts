// The kernels the trainer worker compiles first: what the page's first chart point dispatches (the
// held-out baseline evaluation, then the first PPO iteration at the default settings), in the
// order they are first used. The worker compiles these, the trainer waits for them, and the
// character model's other kernels (other estimators, losses and settings, SFT, the reward model) are compiled
// after the first iteration or once a prepared trainer waits for Start. A kernel missing here is
// still correct: it is compiled on first use. tests/gpu/first_kernels.test.ts checks the list
// against what a trainer dispatches.
import { type KernelSpec, specKey } from '../gpu/pipelines.ts';
import { parseCheckpoint } from '../model/checkpoint.ts';
import { SFT_MODEL_DIMS } from '../model/config.ts';
import { decodeStepKernels } from '../ops/decodeStep.ts';
import { modelKernels } from '../ops/registry.ts';
import type { PpoConfig } from '../rl/config.ts';
import { decodeShapeOf } from '../rl/trainer.ts';

/** `shader#entry` of each kernel; an op's GPU-only and CPU-adapter-only variants are both listed (the backend keeps its own). */
export const FIRST_KERNEL_NAMES: readonly string[] = [
  // held-out evaluation: prefill and KV-cached decoding, sampling
  'embedding#embedding_forward',
  'layernorm_rows#rows_forward',
  'matmul#matmul_8x8',
  'matmul#matmul_4x4',
  'attention_cached#kv_cache_write',
  'attention_cached#attention_cached',
  'slice#slice_forward',
  'sample#sample_step',
  // the iteration's rollout, experience (log-probabilities, rewards, GAE) and update
  'slice#gather_rows',
  'attention#attention_forward',
  'logprobs#rows_forward',
  'rewards#shape_rewards',
  'gae#gae',
  'whiten#whiten',
  'slice#gather_rows_3',
  'elementwise#fill',
  'actor_loss#pack_inputs',
  'actor_loss#actor_loss',
  'layernorm_rows#rows_backward',
  'layernorm#params_serial',
  'layernorm#layernorm_params',
  'matmul#bias_grad',
  'elementwise#gelu_backward',
  'attention_backward#attention_backward',
  'embedding#embedding_backward',
  'optim#norm_partial_serial',
  'optim#norm_final_serial',
  'optim#norm_partial',
  'optim#norm_final',
  'optim#adamw',
  'value_loss#value_rows',
  'aggregate#agg_finalize',
  'slice#slice_backward',
  'tis#tis_weights',
];

const nameOf = (k: KernelSpec) => specKey(k).split('|')[0];

/** The character model's kernels split in two: those of FIRST_KERNEL_NAMES in that order, then the rest in registry order. */
export function kernelsInOrder(): { first: KernelSpec[]; rest: KernelSpec[] } {
  const declared = modelKernels('char');
  const rank = new Map(FIRST_KERNEL_NAMES.map((n, i) => [n, i]));
  const first = declared.filter((k) => rank.has(nameOf(k))).sort((a, b) => rank.get(nameOf(a))! - rank.get(nameOf(b))!);
  return { first, rest: declared.filter((k) => !rank.has(nameOf(k))) };
}

/**
 * The fused decode step a trainer for `config` dispatches in every rollout and evaluation (both
 * adapter kinds' variants; precompile keeps its own), for the page's own actor of that task when
 * it sent one (`actor`), else the shipped checkpoint (whose sizes are SFT_MODEL_DIMS). Sized per
 * model shape, it is not in FIRST_KERNEL_NAMES, and it is one of the costlier kernels to build:
 * asked for ahead of the fixed kernels it builds beside them instead of after them. A wrong guess
 * builds one pipeline in vain; the trainer builds the right one when it is made.
 */
export function decodeKernelsAhead(config: PpoConfig, actor?: Uint8Array): KernelSpec[] {
  let dims: { dModel: number; nHead: number } = SFT_MODEL_DIMS;
  if (actor) {
    try {
      dims = parseCheckpoint(actor).config;
    } catch {
      // a damaged file is refused where it is loaded; the guess stays the shipped model's
    }
  }
  return decodeStepKernels(decodeShapeOf(config, dims));
}
