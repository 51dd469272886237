// The PPO trainer with its roles in either family (src/rl/trainerModels.ts): the character model's
// own Gpt, or the same weights on HfModel as the GPT-2 they are. On the float64 CPU backend whole
// iterations — rollout, experience, actor and critic updates over two epochs, adaptive KL, held-out
// evaluation — give the same metrics and weights through both: the two sum a gradient norm in
// another order, so within 1e-9 relative or 1e-12 absolute (measured after three iterations:
// weights within 3e-14); a state saved by one family loads into the other and goes on as the first
// would. On WebGPU the first iteration of one minibatch (sampled from the same weights, every
// statistic read before an AdamW step) agrees within 2e-5 (measured ≤ 2.4e-7 on SwiftShader and lavapipe).
import { describe, expect, it } from 'vitest';
import type { Backend } from '../../src/backend/backend.ts';
import type { PpoConfig } from '../../src/rl/config.ts';
import { PpoTrainer } from '../../src/rl/trainer.ts';
import type { ModelFamily } from '../../src/rl/trainerModels.ts';
import { cpuBackend, webgpuBackend } from '../helpers/backends.ts';
import { expectClose } from '../helpers/random.ts';
import { tinyCheckpoint, tinyConfig } from '../helpers/rl.ts';

const VOLATILE = /^time_|^gpu_/;
const stable = (m: Record<string, number>) => Object.fromEntries(Object.entries(m).filter(([k]) => !VOLATILE.test(k)));

const CONFIGS: [string, Partial<PpoConfig>][] = [
  [
    'GAE with a critic, adaptive KL, two epochs',
    { seed: 9, actorLr: 3e-3, ppoEpochs: 2, klController: 'adaptive', klCoef: 0.1, klTarget: 0.05, klHorizon: 32, advantageEstimator: 'gae' },
  ],
  ['GRPO, KL in the loss, entropy bonus', { seed: 4, actorLr: 3e-3, advantageEstimator: 'group_norm', useKlLoss: true, klInReward: false, entropyCoef: 0.01 }],
];

async function run(be: Backend, family: ModelFamily, config: Partial<PpoConfig>, iters: number) {
  const t = await PpoTrainer.create({ be, config: tinyConfig(config), actorCheckpoint: await tinyCheckpoint('stop', 9), family });
  try {
    const metrics: Record<string, number>[] = [];
    for (let i = 0; i < iters; i++) metrics.push(stable((await t.iteration()).metrics));
    const eval_ = await t.evaluate(8, 1);
    const weights = await t.readWeights();
    return { metrics, eval_, weights, state: await t.saveState(), checkpoint: await t.actorCheckpoint() };
  } finally {
    t.dispose();
  }
}

function expectSameMetrics(a: Record<string, number>[], b: Record<string, number>[], rtol: number, atol: number) {
  expect(b.length).toBe(a.length);
  a.forEach((m, i) => {
    expect(Object.keys(b[i]).sort(), `iteration ${i + 1}: the same metrics`).toEqual(Object.keys(m).sort());
    for (const k of Object.keys(m)) expectClose([b[i][k]], [m[k]], rtol, atol, `iteration ${i + 1}: ${k}`);
  });
}

describe('the trainer in either family, on cpu (float64)', () => {
  it.each(CONFIGS)('%s: three iterations give the same metrics, evaluation and weights', async (_name, config) => {
    const [own, hf] = [await run(cpuBackend, 'gpt', config, 3), await run(cpuBackend, 'hf', config, 3)];
    expect(Math.abs(own.metrics[2].kl_token_mean) + Math.abs(own.metrics[2].kl_loss), 'the policy moved from the reference').toBeGreaterThan(1e-4);
    expectSameMetrics(own.metrics, hf.metrics, 1e-9, 1e-12);
    expect(hf.eval_).toEqual(own.eval_);
    expectClose(hf.weights.actor, own.weights.actor, 1e-9, 1e-12, 'actor weights');
    if (own.weights.critic) expectClose(hf.weights.critic!, own.weights.critic, 1e-9, 1e-12, 'critic weights');
    expect(hf.checkpoint.length).toBe(own.checkpoint.length);
  });

  it('a state saved in one family loads into the other and goes on as the first does', async () => {
    const config = CONFIGS[0][1];
    const first = await PpoTrainer.create({ be: cpuBackend, config: tinyConfig(config), actorCheckpoint: await tinyCheckpoint('stop', 9), family: 'hf' });
    let state: Uint8Array;
    const straight: Record<string, number>[] = [];
    try {
      await first.iteration();
      await first.iteration();
      state = await first.saveState();
      for (let i = 0; i < 2; i++) straight.push(stable((await first.iteration()).metrics));
    } finally {
      first.dispose();
    }
    for (const family of ['gpt', 'hf'] as const) {
      const next = await PpoTrainer.loadState({ be: cpuBackend, state, family });
      try {
        expect(next.iter).toBe(2);
        const resumed: Record<string, number>[] = [];
        for (let i = 0; i < 2; i++) resumed.push(stable((await next.iteration()).metrics));
        expectSameMetrics(straight, resumed, 1e-9, 1e-12);
      } finally {
        next.dispose();
      }
    }
  });
});

describe('the trainer in either family, on webgpu', () => {
  it.each(CONFIGS)('%s: the first iteration agrees within f32', async (_name, config) => {
    const be = await webgpuBackend();
    // One epoch of one minibatch: every statistic is read before any AdamW step
    const once = { ...config, ppoEpochs: 1, miniBatches: 1 };
    const [own, hf] = [await run(be, 'gpt', once, 1), await run(be, 'hf', once, 1)];
    expectSameMetrics(own.metrics, hf.metrics, 2e-5, 2e-5);
  });
});
