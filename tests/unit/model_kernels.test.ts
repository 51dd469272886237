// The worker compiles ahead only the kernels the configured model needs (modelKernels). The
// character model's set is the declared kernels of the shaders it and the PPO math dispatch —
// every one of them, in registry order, and nothing of the Hugging Face ops — so the page's first
// chart point waits for no Hugging Face kernel (#30 item 6). A Hugging Face model gets them all.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type KernelSpec, specKey } from '../../src/gpu/pipelines.ts';
import { declaredKernels, modelKernels } from '../../src/ops/registry.ts';
import { parseCheckpoint } from '../../src/model/checkpoint.ts';
import { SFT_MODEL_DIMS } from '../../src/model/config.ts';
import { decodeStepKernels } from '../../src/ops/decodeStep.ts';
import { DEFAULT_CONFIG } from '../../src/rl/config.ts';
import { decodeShapeOf } from '../../src/rl/trainer.ts';
import { getTask, TASK_NAMES } from '../../src/tasks/index.ts';
import { Gpt } from '../../src/model/gpt.ts';
import { saveCheckpoint } from '../../src/model/checkpoint.ts';
import { cpuBackend } from '../helpers/backends.ts';
import { decodeKernelsAhead, kernelsInOrder } from '../../src/worker/firstKernels.ts';

/** The shaders of the character model's and the PPO math's fixed kernels (decode_step is built per shape). */
const CHAR_SHADERS = [
  'actor_loss',
  'aggregate',
  'attention',
  'attention_backward',
  'attention_cached',
  'cov_select',
  'elementwise',
  'embedding',
  'gae',
  'group_advantages',
  'kl',
  'layernorm',
  'layernorm_rows',
  'logprobs',
  'matmul',
  'optim',
  'policy_loss',
  'rewards',
  'sample',
  'slice',
  'tis',
  'value_loss',
  'whiten',
];

/** The Hugging Face ops' shaders that declare fixed kernels (the GQA attention kernels are sized per head width). */
const HF_SHADERS = ['embedding_rows', 'gqa_attention_cached', 'linear', 'lm_head', 'rmsnorm', 'rope', 'sample_vocab', 'swiglu'];

const ADAPTERS: [string, boolean | undefined][] = [
  ['any adapter', undefined],
  ['a CPU adapter', true],
  ['a GPU', false],
];

describe.each(ADAPTERS)('modelKernels on %s', (_name, cpuAdapter) => {
  it("char: exactly the declared kernels of the character model's shaders, in registry order", () => {
    const char = modelKernels('char', cpuAdapter);
    const expected = declaredKernels(cpuAdapter).filter((k) => CHAR_SHADERS.includes(k.shader));
    expect(char.map(specKey)).toEqual(expected.map(specKey));
    expect([...new Set(char.map((k) => k.shader))].sort()).toEqual(CHAR_SHADERS);
  });

  it('char leaves out every Hugging Face kernel; hf is every declared kernel', () => {
    const hfOnly = declaredKernels(cpuAdapter).filter((k) => HF_SHADERS.includes(k.shader));
    expect([...new Set(hfOnly.map((k) => k.shader))].sort()).toEqual(HF_SHADERS);
    const char = new Set(modelKernels('char', cpuAdapter).map(specKey));
    expect(hfOnly.map(specKey).filter((k) => char.has(k))).toEqual([]);
    expect(modelKernels('hf', cpuAdapter).map(specKey)).toEqual(declaredKernels(cpuAdapter).map(specKey));
    expect(char.size + hfOnly.length).toBe(declaredKernels(cpuAdapter).length);
  });
});

describe('the trainer worker', () => {
  it("precompiles the character model's kernels, the first iteration's first, and no Hugging Face one", () => {
    const { first, rest } = kernelsInOrder();
    const keys = (ks: readonly KernelSpec[]) => ks.map(specKey);
    expect(new Set([...keys(first), ...keys(rest)])).toEqual(new Set(keys(modelKernels('char'))));
    expect(first.length + rest.length).toBe(modelKernels('char').length);
    const worker = readFileSync(resolve(import.meta.dirname, '../../src/worker/trainer.worker.ts'), 'utf8');
    expect(worker).toMatch(/kernelsInOrder\(\)/);
    expect(worker).not.toMatch(/declaredKernels/);
  });
});

describe('the decode step asked for ahead', () => {
  const actorFile = (task: string) => new Uint8Array(readFileSync(resolve(import.meta.dirname, `../../public/checkpoints/${task}.safetensors`)));

  it("is, for every task's shipped checkpoint, the one its trainer dispatches (the shipped sizes are SFT_MODEL_DIMS)", () => {
    expect(TASK_NAMES.length).toBeGreaterThan(2);
    for (const task of TASK_NAMES) {
      const config = { ...DEFAULT_CONFIG, task, maxResponseLength: 9 };
      const shipped = parseCheckpoint(actorFile(task)).config;
      expect({ nHead: shipped.nHead, dModel: shipped.dModel }, task).toEqual({ nHead: SFT_MODEL_DIMS.nHead, dModel: SFT_MODEL_DIMS.dModel });
      expect(decodeKernelsAhead(config).map(specKey), task).toEqual(decodeStepKernels(decodeShapeOf(config, shipped)).map(specKey));
    }
  });

  it("follows the page's own actor, and keeps the shipped guess for bytes that are no checkpoint", async () => {
    const config = { ...DEFAULT_CONFIG, maxResponseLength: 4 };
    const shipped = decodeKernelsAhead(config).map(specKey);
    const task = getTask('arithmetic');
    const own = new Gpt(cpuBackend, { vocabSize: 3 + task.alphabet.length, nLayer: 1, nHead: 4, dModel: 32, maxSeq: 40, head: 'lm' }, 1);
    const bytes = await saveCheckpoint(own, { alphabet: task.alphabet, task: task.name });
    own.dispose();
    expect(decodeKernelsAhead(config, bytes).map(specKey)).toEqual(decodeStepKernels(decodeShapeOf(config, { dModel: 32, nHead: 4 })).map(specKey));
    expect(decodeKernelsAhead(config, bytes).map(specKey)).not.toEqual(shipped);
    expect(decodeKernelsAhead(config, new Uint8Array([1, 2, 3])).map(specKey)).toEqual(shipped);
  });
});
