// `npm run learning -- --model DIR` (src/cli/learningHf.ts): each preset for a real model runs as
// `npm run train` with the preset's settings, and its card's claim is judged on the seeds' gains in
// held-out accuracy over sampled answers, and on the greedy held-out accuracy not falling too far.
import { parseArgs } from 'node:util';
import { describe, expect, it } from 'vitest';
import { judgeClaim, presetFlags } from '../../src/cli/learningHf.ts';
import { HF_PRESETS, hfPreset } from '../../src/rl/hf/hfPresets.ts';
import { hfTrainProblems } from '../../src/rl/hf/hfTrainSettings.ts';

describe('the presets for a real model', () => {
  it('two presets, GRPO without a critic and PPO with one, both LoRA r 8 on the chat arithmetic task, settings the page accepts', () => {
    expect(HF_PRESETS.map((p) => p.name)).toEqual(['GRPO on your own model', 'PPO with a critic on your own model']);
    expect(hfPreset('GRPO on your own model')!.settings).toMatchObject({ estimator: 'group_norm', loraRank: 8, reward: 'chat-arithmetic' });
    expect(hfPreset('ppoCritic')!.settings).toMatchObject({ estimator: 'gae', samplesPerPrompt: 1, loraRank: 8, reward: 'chat-arithmetic' });
    for (const p of HF_PRESETS) expect(hfTrainProblems(p.settings, { maxPositions: 128, hasChatTemplate: true }), p.name).toEqual([]);
  });

  it("a preset's run is `npm run train` with every one of its settings", () => {
    const p = hfPreset('grpo')!;
    const flags = presetFlags(p, { model: 'M', seed: 3, evalCount: 100, evalSamples: 8, backend: 'cpu', out: 'o.jsonl' });
    const names = [
      'model',
      'task',
      'eval-count',
      'eval-samples',
      'estimator',
      'lora-rank',
      'iters',
      'batch',
      'samples-per-prompt',
      'max-new-tokens',
      'epochs',
      'mini-batches',
      'lr',
      'kl-coef',
      'seed',
      'backend',
      'out',
    ];
    const options = Object.fromEntries([...names.map((n) => [n, { type: 'string' as const }]), ['quiet', { type: 'boolean' as const }]]);
    const { values } = parseArgs({ args: flags, options });
    const s = p.settings;
    expect(values).toEqual({
      model: 'M',
      task: 'chat-arithmetic',
      'eval-count': '100',
      'eval-samples': '8',
      estimator: s.estimator,
      'lora-rank': String(s.loraRank),
      iters: String(s.iterations),
      batch: String(s.promptsPerBatch),
      'samples-per-prompt': String(s.samplesPerPrompt),
      'max-new-tokens': String(s.maxNewTokens),
      epochs: String(s.ppoEpochs),
      'mini-batches': String(s.miniBatches),
      lr: String(s.lr),
      'kl-coef': String(s.klCoef),
      seed: '3',
      backend: 'cpu',
      out: 'o.jsonl',
      quiet: true,
    });
  });

  it('the claim holds only when sampled held-out accuracy rises enough on average and on every seed, and greedy held-out accuracy does not fall too far', () => {
    const p = { ...hfPreset('grpo')!, claim: { minMeanRise: 0.04, minSeedRise: 0.02, maxHeldOutDrop: 0.05 } };
    // the training reward moves with which prompts a batch drew: it is shown, not judged
    const run = (seed: number, sampledBefore: number, sampledAfter: number, before = 0.5, after = 0.5) => ({
      seed,
      sampledBefore,
      sampledAfter,
      before,
      after,
      rewardFirst: 0.9,
      rewardLast: 0.1,
      secondsPerIter: 1,
    });
    expect(judgeClaim(p, [run(1, 0.5, 0.56), run(2, 0.5, 0.54), run(3, 0.5, 0.53)]).ok).toBe(true);
    const lowMean = judgeClaim(p, [run(1, 0.5, 0.53), run(2, 0.5, 0.53), run(3, 0.5, 0.53)]);
    expect(lowMean.ok).toBe(false);
    expect(lowMean.text).toMatch(/mean rise 0\.030/);
    const oneSeed = judgeClaim(p, [run(1, 0.5, 0.6), run(2, 0.5, 0.6), run(3, 0.5, 0.51)]);
    expect(oneSeed.ok).toBe(false);
    expect(oneSeed.text).toMatch(/seed 3 rose 0\.010/);
    const fell = judgeClaim(p, [run(1, 0.5, 0.6), run(2, 0.5, 0.6, 0.5, 0.4), run(3, 0.5, 0.6)]);
    expect(fell.ok).toBe(false);
    expect(fell.text).toMatch(/seed 2 fell 0\.100/);
  });
});
