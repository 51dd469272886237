// SFT lowers the loss on a task within a few dozen steps on a tiny model, and the WebGPU trainer
// follows the float64 CPU trainer step for step.
import { describe, expect, it } from 'vitest';
import type { GptConfig } from '../../src/model/config.ts';
import { Gpt } from '../../src/model/gpt.ts';
import { DEFAULT_SFT, trainSft, type SftOptions } from '../../src/model/sft.ts';
import { getTask, taskTokenizer } from '../../src/tasks/index.ts';
import { BACKENDS, cpuBackend, webgpuBackend } from '../helpers/backends.ts';
import { expectClose, rng } from '../helpers/random.ts';

const task = getTask('arithmetic');
const tok = taskTokenizer(task);
const cfg: GptConfig = { vocabSize: tok.vocabSize, nLayer: 1, nHead: 2, dModel: 32, maxSeq: 16, head: 'lm' };
const opts = (seed: number, steps: number, logEvery: number): SftOptions => ({
  ...DEFAULT_SFT,
  steps,
  seed,
  batchSize: 8,
  logEvery,
  schedule: { peak: 1e-2, warmupSteps: 5, minRatio: 0.1 },
});

describe.each(BACKENDS)('SFT on %s', (_name, makeBackend) => {
  it('lowers the response cross-entropy over 40 steps', async () => {
    const be = await makeBackend();
    const seed = rng(41).int(0, 1e9);
    const model = new Gpt(be, cfg, seed);
    const log = await trainSft(model, task, tok, opts(seed, 40, 5));
    expect(log.length).toBe(8);
    for (const l of log) expect(Number.isFinite(l.loss)).toBe(true);
    const first = log[0].loss;
    const last = log[log.length - 1].loss;
    // starts near ln V (uniform guess) and must lose a good part of it
    expect(first).toBeGreaterThan(1.5);
    expect(last).toBeLessThan(0.75 * first);
    model.dispose();
  });
});

describe('SFT WebGPU vs CPU', () => {
  it('gives the same losses as the float64 trainer for the first steps', async () => {
    const seed = rng(42).int(0, 1e9);
    const gpuBe = await webgpuBackend();
    const run = async (be: typeof cpuBackend | Awaited<ReturnType<typeof webgpuBackend>>) => {
      const init = Float64Array.from(new Float32Array(await cpuBackend.read(new Gpt(cpuBackend, cfg, seed).params)));
      const m = new Gpt(be, cfg, init);
      const log = await trainSft(m, task, tok, opts(seed, 4, 1));
      m.dispose();
      return log.map((l) => l.loss);
    };
    const want = await run(cpuBackend);
    const got = await run(gpuBe);
    expectClose(got, want, 1e-4, 1e-5, 'SFT losses');
  });
});
