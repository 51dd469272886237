// The metric vocabulary (src/rl/metricNames.ts) is what the trainer reports: every iteration has
// every ITERATION_METRICS name, and each name it reports is a MetricName, across the paths that
// add occasional metrics (the text task, DAPO's dynamic sampling, rollout correction).
import { describe, expect, it } from 'vitest';
import { CpuBackend } from '../../src/backend/cpu/cpuBackend.ts';
import { saveCheckpoint } from '../../src/model/checkpoint.ts';
import { Gpt } from '../../src/model/gpt.ts';
import { ITERATION_METRICS, isMetricName } from '../../src/rl/metricNames.ts';
import { PpoTrainer } from '../../src/rl/trainer.ts';
import { getTask, taskTokenizer } from '../../src/tasks/index.ts';
import { tinyConfig } from '../helpers/rl.ts';

const be = new CpuBackend();

/** A random-init 1-layer d32 policy for `task`, long enough for its prompts and 4 response characters. */
async function checkpoint(task: string): Promise<Uint8Array> {
  const tok = taskTokenizer(getTask(task));
  const m = new Gpt(be, { vocabSize: tok.vocabSize, nLayer: 1, nHead: 2, dModel: 32, maxSeq: 32, head: 'lm' }, 3);
  return saveCheckpoint(m, { alphabet: tok.alphabet, task });
}

const CASES = [
  { name: 'GAE with a critic', task: 'stop', over: {}, occasional: ['rollout_old_kl'] },
  {
    name: 'RLOO with dynamic sampling',
    task: 'stop',
    over: { advantageEstimator: 'rloo', dynamicSampling: true, maxExtraRollouts: 1 },
    occasional: ['filtered_groups', 'dynamic_sampling_rounds', 'filled_with_filtered'],
  },
  {
    name: 'rollout correction (TIS and rejection sampling)',
    task: 'stop',
    over: { tisCap: 2, rolloutRs: 'token_k1' },
    occasional: ['rollout_corr_kl', 'rollout_corr_rollout_rs_masked_fraction'],
  },
  { name: 'the text task (fluency, distinct-n)', task: 'sentiment', over: { task: 'sentiment', maxResponseLength: 4 }, occasional: ['fluency', 'distinct_1', 'distinct_2'] },
] as const;

describe('the metric vocabulary is what the trainer reports', () => {
  it.each(CASES)('$name', { timeout: 120_000 }, async ({ task, over, occasional }) => {
    const t = await PpoTrainer.create({ be, config: tinyConfig({ seed: 3, ...over }), actorCheckpoint: await checkpoint(task) });
    try {
      for (let i = 0; i < 2; i++) {
        const m = (await t.iteration()).metrics;
        for (const name of [...ITERATION_METRICS, ...occasional]) expect(m, `iteration ${i}: ${name}`).toHaveProperty(name);
        expect(Object.keys(m).filter((k) => !isMetricName(k))).toEqual([]);
      }
    } finally {
      t.dispose();
    }
  });

  it('takes only its own names', () => {
    expect(isMetricName('reward_mean')).toBe(true);
    expect(isMetricName('rollout_corr_kl')).toBe(true);
    expect(isMetricName('distinct_2')).toBe(true);
    expect(isMetricName('reward')).toBe(false);
    expect(isMetricName('eval_accuracy')).toBe(false);
  });
});
