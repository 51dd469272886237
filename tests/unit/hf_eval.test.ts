// Held-out evaluation of a Hugging Face model (src/rl/hf/hfEval.ts) on the float64 CPU backend:
// K draws a prompt, in the prompts' order, the same draws for the same seed and batch, a prompt's
// draws independent of one another, the accuracy counted over every draw, and the model's
// adapters left as they were.
import { describe, expect, it } from 'vitest';
import { CpuBackend } from '../../src/backend/cpu/cpuBackend.ts';
import { HfModel } from '../../src/model/hf/hfModel.ts';
import { LORA_TARGETS } from '../../src/model/hf/lora.ts';
import { newLoraTrainable } from '../../src/model/hf/loraParams.ts';
import { openHfFolder } from '../../src/model/hf/open.ts';
import { synthesizeToMemory } from '../../src/model/hf/synthetic.ts';
import { accuracyByGroup, greedyEvaluation, sampledEvaluation } from '../../src/rl/hf/hfEval.ts';
import { rng } from '../helpers/random.ts';

async function setup() {
  const r = rng(7710);
  const folder = await synthesizeToMemory({ family: 'llama', dtype: 'F32', shards: 1, seed: r.nextU32() });
  const model = await HfModel.load(new CpuBackend(), folder, await openHfFolder(folder), 'f32');
  const actor = newLoraTrainable(model, { r: 2, alpha: 4, rslora: false, targets: LORA_TARGETS }, r.nextU32());
  return { model, actor, seed: r.nextU32() };
}

const prompts = [
  { ids: [1, 2, 3], text: 'p0' },
  { ids: [4, 5], text: 'p1' },
  { ids: [6], text: 'p2' },
];
const decode = (ids: readonly number[]) => ids.join(' ');
/** 1 when the answer's first token is even: about half the draws of a random model. */
const score = (_prompt: string, response: string) => (Number(response.split(' ')[0]) % 2 === 0 ? 1 : 0);
const opts = { maxNewTokens: 4, eosIds: [], padId: 0 };
const held = { prompts, decode, score };

describe('held-out evaluation of a Hugging Face model', () => {
  it('draws K answers a prompt in order, the same for one seed, each from its own stream, counted over every draw', async () => {
    const { model, seed } = await setup();
    const run = (batch: number, s = seed) => sampledEvaluation(model, null, held, { ...opts, batch, samples: 5, temperature: 1, seed: s });
    const a = await run(15);
    expect(a.samples.map((x) => x.prompt)).toEqual(prompts.flatMap((p) => Array(5).fill(p.text)));
    expect(a.accuracy).toBe(a.samples.filter((x) => x.score >= 0.5).length / 15);
    expect(a.scoreMean).toBe(a.samples.reduce((t, x) => t + x.score, 0) / 15);
    for (const x of a.samples) expect(x.response.split(' ')).toHaveLength(4);
    // the same seed, the same draws
    expect((await run(15)).samples).toEqual(a.samples);
    // one prompt a chunk: its five draws come from five streams, not one repeated
    const one = await run(1);
    for (const p of prompts) expect(new Set(one.samples.filter((x) => x.prompt === p.text).map((x) => x.response)).size).toBeGreaterThan(1);
    // another seed, other draws
    expect((await run(15, (seed + 1) >>> 0)).samples).not.toEqual(a.samples);
    expect(() => sampledEvaluation(model, null, held, { ...opts, batch: 3, samples: 0, temperature: 1, seed })).toThrow('samples must be a positive integer, got 0');
  });

  it('evaluates with the adapters asked for and leaves the model’s own in place', async () => {
    const { model, actor, seed } = await setup();
    model.setAdapters(actor.adapters);
    const base = await greedyEvaluation(model, null, held, { ...opts, batch: 3 });
    expect(model.loraAdapters).toBe(actor.adapters);
    model.setAdapters(null);
    // LoRA's B starts at zero (PEFT's init): the actor answers as the base does
    expect((await greedyEvaluation(model, actor.adapters, held, { ...opts, batch: 3 })).samples).toEqual(base.samples);
    expect(model.loraAdapters).toBe(null);
    const sampledBase = await sampledEvaluation(model, null, held, { ...opts, batch: 6, samples: 2, temperature: 1, seed });
    expect((await sampledEvaluation(model, actor.adapters, held, { ...opts, batch: 6, samples: 2, temperature: 1, seed })).samples).toEqual(sampledBase.samples);
  });

  it('splits an evaluation’s accuracy by a group of its prompts, leaving out those of none', () => {
    const samples = [
      { prompt: 'a1', response: '', score: 1 },
      { prompt: 'a2', response: '', score: 0 },
      { prompt: 'b1', response: '', score: 0.5 },
      { prompt: 'x', response: '', score: 1 },
      { prompt: 'a3', response: '', score: 1 },
    ];
    const byLetter = accuracyByGroup({ accuracy: 0, scoreMean: 0, samples }, (p) => (p === 'x' ? null : p[0]));
    expect(byLetter).toEqual({ a: { accuracy: 2 / 3, count: 3 }, b: { accuracy: 1, count: 1 } });
  });
});
