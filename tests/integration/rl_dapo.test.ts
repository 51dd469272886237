// DAPO through the trainer (float64 CPU backend, tiny policy): dynamic sampling keeps the batch
// shape, logs filtered_groups and the rounds it took, and fills up with dropped groups when the
// extra-round cap is reached; the soft overlong penalty lowers the scores of long responses.
import { describe, expect, it } from 'vitest';
import { PpoTrainer } from '../../src/rl/trainer.ts';
import { informativeGroups } from '../../src/rl/dapo.ts';
import { decodeSamples } from '../../src/rl/rollout.ts';
import { finalScores, ruleScores } from '../../src/rl/score.ts';
import { getTask, taskTokenizer } from '../../src/tasks/index.ts';
import { cpuBackend } from '../helpers/backends.ts';

const task = getTask('stop');
const tok = taskTokenizer(task);
import { expectFiniteMetrics, tinyCheckpoint, tinyConfig } from '../helpers/rl.ts';

describe('DAPO in the trainer', () => {
  it('dynamic sampling: fixed batch shape, filtered_groups and rounds logged, informative groups first', { timeout: 120_000 }, async () => {
    const config = tinyConfig({ seed: 4, advantageEstimator: 'group_norm', promptsPerBatch: 4, samplesPerPrompt: 2, miniBatches: 2, dynamicSampling: true, maxExtraRollouts: 3 });
    const t = await PpoTrainer.create({ be: cpuBackend, config, actorCheckpoint: await tinyCheckpoint('stop') });
    let sawFilter = false;
    for (let i = 0; i < 4; i++) {
      const { metrics } = await t.iteration();
      expectFiniteMetrics(metrics, `iteration ${i}`);
      const r = t.lastRollout!;
      expect(r.B).toBe(8);
      expect(metrics.dynamic_sampling_rounds).toBeGreaterThanOrEqual(1);
      expect(metrics.dynamic_sampling_rounds).toBeLessThanOrEqual(4);
      expect(metrics.filtered_groups).toBeGreaterThanOrEqual(0);
      if (metrics.filtered_groups > 0) sawFilter = true;
      // groups are renumbered 0..3, two rows each, and the informative ones come first
      expect(Array.from(r.group)).toEqual([0, 0, 1, 1, 2, 2, 3, 3]);
      const samples = decodeSamples(r, tok);
      const scores = finalScores(ruleScores(task, samples), samples, config.scoreClip, config.noEosPenalty);
      const { kept } = informativeGroups(scores, r.group);
      expect(kept).toEqual(Array.from({ length: 4 - metrics.filled_with_filtered }, (_, g) => g));
    }
    expect(sawFilter).toBe(true);
    t.dispose();
  });

  it('without dynamic sampling no DAPO metrics are logged and the batch is the plain rollout', { timeout: 60_000 }, async () => {
    const t = await PpoTrainer.create({ be: cpuBackend, config: tinyConfig({ seed: 4, advantageEstimator: 'group_norm' }), actorCheckpoint: await tinyCheckpoint('stop') });
    const { metrics } = await t.iteration();
    expect(metrics.filtered_groups).toBeUndefined();
    t.dispose();
  });

  it('the overlong penalty lowers the scores of responses in the last L_cache tokens', { timeout: 60_000 }, async () => {
    const ck = await tinyCheckpoint('stop');
    const base = tinyConfig({ seed: 6, maxResponseLength: 6 });
    const plain = await PpoTrainer.create({ be: cpuBackend, config: base, actorCheckpoint: ck });
    const a = await plain.iteration();
    const r = plain.lastRollout!;
    plain.dispose();
    const pen = await PpoTrainer.create({ be: cpuBackend, config: { ...base, overlongBuffer: 3, overlongPenalty: 2 }, actorCheckpoint: ck });
    const b = await pen.iteration({ rollout: r });
    pen.dispose();
    // the same rollout: the mean score drops by the mean penalty, which is > 0 for this random policy
    expect(b.metrics.reward_mean).toBeLessThan(a.metrics.reward_mean);
    expect(informativeGroups([0, 0], [1, 1]).dropped).toEqual([1]);
  });
});
