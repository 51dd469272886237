// Every advantage estimator and every KL estimator (in the reward and in the KL loss), with every
// loss aggregation, for two PPO iterations on WebGPU: no NaN anywhere, every metric finite, the
// sample rows and ratio histogram filled, and one readback per iteration once the rollout is sampled
// ahead (two with targetKl).
// OPO, GRPO pass@k and ReMax also on both backends: captured advantages equal the inspector's
// float64 recomputation and verl's functions (tests/helpers/verl.ts) on the iteration's own
// inputs; ReMax's baselines equal the rewards of the greedy responses, one per prompt.
import { describe, expect, it } from 'vitest';
import { KL_ESTIMATORS } from '../../src/reference/kl.ts';
import { LOSS_AGGS } from '../../src/reference/aggregate.ts';
import { ADVANTAGE_ESTIMATORS, KL_LOSS_ESTIMATORS } from '../../src/rl/config.ts';
import { appliedKl, recomputeTrace } from '../../src/rl/inspect/index.ts';
import { modelFromCheckpoint } from '../../src/model/checkpoint.ts';
import { decodeSamples, groupPrompts, sampleGreedy } from '../../src/rl/rollout.ts';
import { scoreRollout } from '../../src/rl/score.ts';
import { PpoTrainer } from '../../src/rl/trainer.ts';
import { getTask, taskTokenizer } from '../../src/tasks/index.ts';
import { BACKENDS, webgpuBackend } from '../helpers/backends.ts';
import { expectClose, TOL } from '../helpers/random.ts';
import { expectFiniteMetrics, tinyCheckpoint, tinyConfig } from '../helpers/rl.ts';
import * as verl from '../helpers/verl.ts';

describe('PPO trainer estimators on webgpu', () => {
  it.each(ADVANTAGE_ESTIMATORS.map((e, i) => [e, i] as const))('%s runs two iterations with finite metrics', async (estimator, i) => {
    const be = await webgpuBackend();
    const config = tinyConfig({
      advantageEstimator: estimator,
      // Reward: indices 1–6 (k1_clamped, reward-only, included; k1 is the default elsewhere). Loss: all six it accepts.
      klEstimator: KL_ESTIMATORS[(i + 1) % KL_ESTIMATORS.length],
      useKlLoss: true,
      klLossEstimator: KL_LOSS_ESTIMATORS[i % KL_LOSS_ESTIMATORS.length],
      klLossCoef: 0.05,
      lossAgg: LOSS_AGGS[i % LOSS_AGGS.length],
      entropyCoef: 0.01,
      klController: i % 2 === 0 ? 'adaptive' : 'fixed',
      klTarget: 0.01,
      klHorizon: 100,
      dualClip: i % 2 === 0 ? 3 : null,
      valueClip: i % 2 === 0 ? 0.2 : null,
      ppoEpochs: 2,
      // large lr so that the second iteration's policy moved away from the reference
      actorLr: 3e-3,
      seed: 10 + i,
    });
    const trainer = await PpoTrainer.create({ be, config, actorCheckpoint: await tinyCheckpoint('stop') });
    const betas: number[] = [];
    for (let it = 0; it < 2; it++) {
      const r = await trainer.iteration();
      const where = `${estimator} iteration ${it}`;
      expectFiniteMetrics(r.metrics, where);
      expect(r.iter).toBe(it);
      // Iteration 0 reads its own rollout, then the final statistics with iteration 1's rollout
      // (sampled ahead); from iteration 1 on that one readback is all.
      expect(r.metrics.gpu_readbacks, where).toBe(it === 0 ? 2 : 1);
      expect(r.metrics.update_steps).toBe(4);
      expect(r.samples.length).toBeGreaterThan(0);
      for (const row of r.samples) {
        expect(row.tokens.length).toBeGreaterThan(0);
        for (const t of row.tokens) for (const v of [t.advantage, t.kl, t.ratio, t.value, t.reward!, t.return!]) expect(Number.isFinite(v), where).toBe(true);
      }
      expect(r.ratios.ratios.length).toBe(r.ratios.advantages.length);
      expect(r.ratios.ratios.every((x) => Number.isFinite(x) && x > 0)).toBe(true);
      if (estimator !== 'gae') {
        expect(r.metrics.value_loss).toBe(0); // critic-free estimators
      }
      betas.push(r.metrics.beta);
    }
    expect(trainer.iter).toBe(2);
    // the adaptive controller lowers β while KL is under its (tiny) target… unless KL overshoots it
    if (config.klController === 'fixed') expect(betas).toEqual([config.klCoef, config.klCoef]);
    else expect(betas[1]).not.toBe(betas[0]);
    const evalMetrics = await trainer.evaluate(8);
    expect(Object.values(evalMetrics).every(Number.isFinite)).toBe(true);
    trainer.dispose();
  });

  it('targetKl stops the epoch loop early with one extra readback per epoch boundary', async () => {
    const be = await webgpuBackend();
    const config = tinyConfig({ ppoEpochs: 3, targetKl: 1e-9, actorLr: 1e-2, seed: 5 });
    const trainer = await PpoTrainer.create({ be, config, actorCheckpoint: await tinyCheckpoint('stop') });
    await trainer.iteration(); // iteration 0: policy = reference, ratios start at 1
    const r = await trainer.iteration();
    expectFiniteMetrics(r.metrics, 'targetKl');
    expect(r.metrics.approx_kl).toBeGreaterThan(1e-9);
    expect(r.metrics.update_steps).toBe(2); // stopped after the first epoch of two minibatches
    expect(r.metrics.gpu_readbacks).toBe(2); // the epoch boundary's, and the final one (its rollout was sampled ahead)
    trainer.dispose();
  });
});

describe.each(BACKENDS)('OPO, GRPO pass@k, ReMax training on %s', (_name, makeBackend) => {
  const { rtol, atol } = TOL.reduce;
  it.each(['opo', 'grpo_passk', 'remax'] as const)("%s: two iterations, finite, advantages = recomputation = verl's", async (estimator) => {
    const be = await makeBackend();
    const config = tinyConfig({
      advantageEstimator: estimator,
      samplesPerPrompt: 3,
      klInReward: true,
      klEstimator: 'k3',
      klCoef: 0.1,
      groupKlOrder: 'verl', // verl's own order, so its functions are the oracle
      actorLr: 3e-3,
      seed: 41,
    });
    const checkpoint = await tinyCheckpoint('stop');
    const trainer = await PpoTrainer.create({ be, config, actorCheckpoint: checkpoint });
    for (let it = 0; it < 2; it++) {
      const r = await trainer.iteration({ capture: true });
      const where = `${estimator} iteration ${it}`;
      expectFiniteMetrics(r.metrics, where);
      expect(r.metrics.gpu_readbacks, where).toBe(it === 0 ? 2 : 1); // the greedy responses ride along
      const t = r.trace!;
      const { B, A } = t;
      for (const v of t.stored.advantages) expect(Number.isFinite(v), where).toBe(true);
      expectClose(t.stored.advantages, recomputeTrace(t).advantages, rtol, atol, `${where}: recomputation`);
      const beta = appliedKl(t.knobs).rewardBeta;
      expect(beta).toBeGreaterThan(0);
      const tokenRewards = verl.applyKlPenalty(t.scores, t.oldLogprobs, t.refLogprobs, t.actionMask, B, A, beta, 'low_var_kl');
      const want =
        estimator === 'opo'
          ? verl.opoAdvantage(tokenRewards, t.actionMask, t.group, B, A)
          : estimator === 'grpo_passk'
            ? verl.grpoPasskAdvantage(tokenRewards, t.actionMask, t.group, B, A)
            : verl.remaxAdvantage(tokenRewards, t.baselines!, t.actionMask, B, A).advantages;
      expectClose(t.stored.advantages, want, rtol, atol, `${where}: verl`);
      if (estimator === 'remax') {
        // One greedy response per prompt, for the prompts of the batch, scored with the same reward.
        const roll = trainer.lastRollout!;
        const greedy = roll.greedy!;
        expect(greedy.prompts).toEqual(groupPrompts(roll.prompts, roll.group).prompts);
        expect(greedy.B).toBe(config.promptsPerBatch);
        const task = getTask(config.task);
        const tok = taskTokenizer(task);
        const { scores } = await scoreRollout({ be, cfg: config, task, tok, rewardModel: undefined, rewardSandbox: undefined }, { batch: greedy, device: null }, it);
        const byGroup = new Map(Array.from(greedy.group, (id, i) => [id, scores[i]] as const));
        expect(Array.from(t.baselines!)).toEqual(Array.from(t.group, (id) => byGroup.get(id)));
        expect(decodeSamples(greedy, tok).length).toBe(greedy.B);
        if (it === 0) {
          // Iteration 0 sampled from the checkpoint itself: a fresh copy decodes the same greedy
          // responses, under another sampling seed (argmax draws nothing).
          const fresh = modelFromCheckpoint(be, checkpoint, { alphabet: tok.alphabet, task: task.name }).model;
          const again = await sampleGreedy(fresh, tok, { ...roll, greedy: null }, 987654);
          expect(Array.from(again.sequences)).toEqual(Array.from(greedy.sequences));
          fresh.dispose();
        }
      } else {
        expect(t.baselines ?? null).toBeNull();
      }
    }
    trainer.dispose();
  });

  it("remax with DAPO's dynamic sampling: the kept groups keep their greedy baselines", async () => {
    const be = await makeBackend();
    const config = tinyConfig({ advantageEstimator: 'remax', samplesPerPrompt: 2, dynamicSampling: true, maxExtraRollouts: 2, seed: 43 });
    const trainer = await PpoTrainer.create({ be, config, actorCheckpoint: await tinyCheckpoint('stop') });
    const r = await trainer.iteration({ capture: true });
    expectFiniteMetrics(r.metrics, 'remax + DAPO');
    const t = r.trace!;
    expectClose(t.stored.advantages, recomputeTrace(t).advantages, rtol, atol, 'remax + DAPO: recomputation');
    const roll = trainer.lastRollout!;
    const task = getTask(config.task);
    const { scores } = await scoreRollout(
      { be, cfg: config, task, tok: taskTokenizer(task), rewardModel: undefined, rewardSandbox: undefined },
      { batch: roll.greedy!, device: null },
      0,
    );
    const byGroup = new Map(Array.from(roll.greedy!.group, (id, i) => [id, scores[i]] as const));
    expect(Array.from(t.baselines!)).toEqual(Array.from(t.group, (id) => byGroup.get(id)));
    trainer.dispose();
  });
});
