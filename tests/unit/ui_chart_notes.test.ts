// Notes under charts that are flat by construction for the runs shown.
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../src/rl/config.ts';
import { chartNote } from '../../src/ui/charts/chartNotes.ts';

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
