// The worker compiles ahead only the kernels the configured model needs (modelKernels). The
// character model's set is the declared kernels of the shaders it and the PPO math dispatch —
// every one of them, in registry order, and nothing of the Hugging Face ops — so the page's first
// chart point waits for no Hugging Face kernel (#30 item 6). A Hugging Face model gets them all.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type KernelSpec, specKey } from '../../src/gpu/pipelines.ts';
import { declaredKernels, modelKernels } from '../../src/ops/registry.ts';
import { kernelsInOrder } from '../../src/worker/firstKernels.ts';

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
