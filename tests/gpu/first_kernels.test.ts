// The kernels the trainer worker compiles first (src/worker/firstKernels.ts) are the ones the
// page's first chart point dispatches: the held-out baseline and the first PPO iteration at the
// page bench's settings (SMALL_CONFIG_QUERY in src/bench/pageFrames.ts) on the default task. A
// kernel dispatched there but missing from the list would be compiled on first use, inside the
// first iteration; a listed name that no op declares is a stale entry.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { specKey } from '../../src/gpu/pipelines.ts';
import { modelKernels } from '../../src/ops/registry.ts';
import { DEFAULT_CONFIG } from '../../src/rl/config.ts';
import { PpoTrainer } from '../../src/rl/trainer.ts';
import { evalSize } from '../../src/worker/evalSchedule.ts';
import { FIRST_KERNEL_NAMES, kernelsInOrder } from '../../src/worker/firstKernels.ts';
import { webgpuBackend } from '../helpers/backends.ts';

const SMALL = { nLayer: 1, nHead: 2, dModel: 32, promptsPerBatch: 4, samplesPerPrompt: 2, maxResponseLength: 6, ppoEpochs: 1, miniBatches: 1 };

describe('the kernels compiled first', () => {
  it("are the character model's kernels, each listed once, and with the rest make up all of them", () => {
    const declared = new Set(modelKernels('char').map((k) => specKey(k).split('|')[0]));
    for (const name of FIRST_KERNEL_NAMES) expect(declared, name).toContain(name);
    expect(new Set(FIRST_KERNEL_NAMES).size).toBe(FIRST_KERNEL_NAMES.length);
    const { first, rest } = kernelsInOrder();
    expect(first.map((k) => specKey(k).split('|')[0])).toEqual(FIRST_KERNEL_NAMES);
    expect([...first, ...rest].map(specKey).sort()).toEqual(modelKernels('char').map(specKey).sort());
  });

  it('cover every kernel the baseline evaluation and the first iteration dispatch (besides the decode step built per shape)', async () => {
    const be = await webgpuBackend();
    const config = { ...DEFAULT_CONFIG, ...SMALL };
    const before = new Map(be.rt.recorder.dispatchesByKernel);
    const trainer = await PpoTrainer.create({ be, config, actorCheckpoint: new Uint8Array(readFileSync(`public/checkpoints/${config.task}.safetensors`)) });
    try {
      const { count, samplesPerPrompt } = evalSize(config);
      await trainer.evaluate(count, samplesPerPrompt);
      await trainer.sampleAhead();
      await trainer.iteration({ sampleNext: true });
    } finally {
      trainer.dispose();
    }
    const dispatched = [...be.rt.recorder.dispatchesByKernel].filter(([k, n]) => n > (before.get(k) ?? 0)).map(([k]) => k.replace(':', '#'));
    expect(dispatched.length).toBeGreaterThan(20);
    const listed = new Set([...FIRST_KERNEL_NAMES, 'decode_step#decode_step', 'decode_step_scratch#decode_step']); // the decode step is asked for ahead, per shape
    expect(dispatched.filter((k) => !listed.has(k))).toEqual([]);
  });
});
