// Notes under charts that are flat by construction for the runs shown.
import { beforeAll, describe, expect, it } from 'vitest';
import { loadNamespaces } from '../../src/i18n/index.ts';
import { DEFAULT_CONFIG } from '../../src/rl/config.ts';
import { chartsFor } from '../../src/ui/charts/chartList.ts';
import { chartNote, klTargetLine, noiseFloor } from '../../src/ui/charts/chartNotes.ts';

// The chart texts are in the lazily loaded `charts` namespace.
beforeAll(() => loadNamespaces(['charts']));

const gae = DEFAULT_CONFIG; // gae, 2 epochs × 2 minibatches
const rloo = { ...DEFAULT_CONFIG, advantageEstimator: 'rloo' as const };
const single = { ...DEFAULT_CONFIG, ppoEpochs: 1, miniBatches: 1 };

describe('chartNote', () => {
  it('explains a missing critic only when no shown run has one', () => {
    expect(chartNote('value_loss', [rloo])).toMatch(/^No critic: rloo/);
    expect(chartNote('explained_variance', [rloo, { ...rloo, advantageEstimator: 'group_norm' }])).toMatch(/rloo, group_norm/);
    expect(chartNote('value_loss', [rloo, gae])).toBeNull();
    expect(chartNote('value_loss', [gae])).toBeNull();
  });

  it('explains ratio 1 when every shown run makes one update per batch', () => {
    expect(chartNote('clipfrac', [single])).toMatch(/every ratio is 1/);
    expect(chartNote('approx_kl', [single, { ...single, advantageEstimator: 'rloo' }])).toMatch(/PPO epochs or minibatches/);
    expect(chartNote('clipfrac', [single, gae])).toBeNull();
    expect(chartNote('clipfrac', [{ ...DEFAULT_CONFIG, ppoEpochs: 2, miniBatches: 1 }])).toBeNull();
  });

  it('says nothing for other charts or without runs', () => {
    expect(chartNote('reward_mean', [rloo, single])).toBeNull();
    expect(chartNote('value_loss', [])).toBeNull();
  });
});

describe('the KL-per-token, rollout-vs-old and filtered-groups charts', () => {
  const adaptive = { ...DEFAULT_CONFIG, klController: 'adaptive' as const, klTarget: 0.1 };

  it('kl_token_mean draws the target line only when every shown run steers to the same target', () => {
    expect(klTargetLine([adaptive])).toBe(0.1);
    expect(klTargetLine([adaptive, adaptive])).toBe(0.1);
    expect(klTargetLine([adaptive, { ...adaptive, klTarget: 0.2 }])).toBeNull();
    expect(klTargetLine([adaptive, gae])).toBeNull();
    expect(klTargetLine([])).toBeNull();
    expect(chartNote('kl_token_mean', [adaptive])).toMatch(/target of 0\.1 per token \(dashed line\)/);
    expect(chartNote('kl_token_mean', [gae])).toMatch(/what the adaptive KL controller reads/);
  });

  it('rollout_old_kl is said to be ≈ 0 by construction only without top-k and top-p', () => {
    expect(chartNote('rollout_old_kl', [gae])).toMatch(/≈ 0 by construction/);
    expect(chartNote('rollout_old_kl', [gae, { ...gae, topK: 5 }])).toBeNull();
    expect(chartNote('rollout_old_kl', [{ ...gae, topP: 0.9 }])).toBeNull();
  });

  it('a chart that is 0 by construction keeps a fixed band instead of magnifying float32 rounding', () => {
    expect(noiseFloor('rollout_old_kl', [gae])).toBe(0.01);
    expect(chartNote('rollout_old_kl', [gae])).toMatch(/float32 rounding/);
    expect(noiseFloor('rollout_old_kl', [gae, { ...gae, topK: 5 }])).toBeNull();
    expect(noiseFloor('approx_kl', [single])).toBe(0.01);
    expect(noiseFloor('approx_kl', [gae])).toBeNull();
    expect(noiseFloor('reward_mean', [gae])).toBeNull();
    expect(noiseFloor('rollout_old_kl', [])).toBeNull();
  });

  it('says which coefficient the adaptive controller moves', () => {
    const lossOnly = { ...DEFAULT_CONFIG, klController: 'adaptive' as const, klInReward: false, useKlLoss: true };
    const inReward = { ...DEFAULT_CONFIG, klController: 'adaptive' as const };
    expect(chartNote('kl_loss_coef', [lossOnly])).toMatch(/^Adaptive KL/);
    expect(chartNote('beta', [inReward])).toMatch(/^Adaptive KL/);
    expect(chartNote('beta', [gae])).toMatch(/^Fixed coefficient/);
    expect(chartNote('beta', [gae, inReward])).toBeNull();
  });

  it('the filtered-groups chart is there for dynamic sampling (runs, or the settings when no run is shown) and for runs that logged it', () => {
    const titles = (runs: Parameters<typeof chartsFor>[0], current = DEFAULT_CONFIG) => chartsFor(runs, current).map((c) => c.metric);
    const dapo = { ...DEFAULT_CONFIG, dynamicSampling: true };
    expect(titles([])).not.toContain('filtered_groups');
    expect(titles([], dapo)).toContain('filtered_groups');
    expect(titles([{ config: DEFAULT_CONFIG, metrics: [] }], dapo)).not.toContain('filtered_groups');
    expect(titles([{ config: dapo, metrics: [] }])).toContain('filtered_groups');
    expect(titles([{ config: DEFAULT_CONFIG, metrics: [{ iter: 0, values: { filtered_groups: 3 } }] }])).toContain('filtered_groups');
    // The others are always there, KL per token beside KL.
    const all = titles([]);
    expect(all).toEqual(expect.arrayContaining(['kl_token_mean', 'rollout_old_kl', 'reward_mean']));
    expect(all.indexOf('kl_token_mean')).toBe(all.indexOf('kl') + 1);
  });
});
