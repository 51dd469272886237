// Every preset is a valid config on top of the defaults and explains itself: a one-sentence task,
// a one-line "what to watch" and two sentences of explanation.
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, validateConfig } from '../../src/rl/config.ts';
import { PRESETS, presetArms, presetValues } from '../../src/rl/presets.ts';

describe('experiment presets', () => {
  it.each(PRESETS.map((p) => [p.name, p] as const))('%s applies cleanly to the default config', (_name, preset) => {
    expect(validateConfig({ ...DEFAULT_CONFIG, ...preset.values })).toEqual([]);
    expect(Object.keys(preset.values).length).toBeGreaterThan(0);
    for (const key of Object.keys(preset.values)) expect(key in DEFAULT_CONFIG, `${preset.name}: ${key}`).toBe(true);
    expect(preset.explanation.split(/(?<=\.)\s+/).length, `${preset.name}: two sentences`).toBe(2);
  });

  it.each(PRESETS.map((p) => [p.name, p] as const))('%s has a budget of at most 200 iterations and valid arms', (_name, preset) => {
    expect(Number.isInteger(preset.iterations) && preset.iterations >= 1 && preset.iterations <= 200).toBe(true);
    for (const arm of presetArms(preset)) expect(validateConfig({ ...DEFAULT_CONFIG, ...arm.values }), arm.label).toEqual([]);
    if (preset.promise !== undefined) expect(preset.promise).toMatch(/\d/); // measured numbers, not a placeholder
  });

  it.each(PRESETS.map((p) => [p.name, p] as const))('%s says its task in one sentence and what to watch in one line', (_name, preset) => {
    for (const line of [preset.summary, preset.watch]) {
      expect(line.length).toBeGreaterThan(30);
      expect(line.length, line).toBeLessThanOrEqual(140); // one line on a card, and in the tour's Start step
      expect(line.split(/(?<=\.)\s+/).length, line).toBe(1);
    }
    expect(preset.watch).toMatch(/^Watch /);
  });

  it('shows PPO with its critic on the first card, or says why another estimator leads', () => {
    const first = PRESETS[0];
    const estimator = presetValues(first.name).advantageEstimator ?? DEFAULT_CONFIG.advantageEstimator;
    if (estimator === 'gae') return;
    expect(first.whyNoCritic, `${first.name} trains no critic`).toMatch(/\d/); // a measured reason
    const withCritic = PRESETS.filter((p) => presetArms(p).some((a) => a.values.advantageEstimator === 'gae'));
    expect(withCritic.length).toBeGreaterThan(0);
    expect(withCritic.some((p) => first.whyNoCritic?.includes(p.name))).toBe(true); // names where the critic is seen
  });

  it('includes the presets named in the product and looks presets up by name', () => {
    for (const name of ['Learn arithmetic', 'Reward hacking without KL', 'Tight vs loose clipping', 'PPO vs GRPO', 'Adaptive KL', 'Stop properly', 'Entropy collapse']) {
      expect(PRESETS.map((p) => p.name)).toContain(name);
    }
    expect(presetValues('PPO vs GRPO').advantageEstimator).toBe('group_norm');
    expect(() => presetValues('nope')).toThrow(/no preset named "nope"/);
  });
});
