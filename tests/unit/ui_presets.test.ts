// Every preset is a valid config on top of the defaults and explains itself in two sentences.
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, validateConfig } from '../../src/rl/config.ts';
import { PRESETS, presetValues } from '../../src/ui/presets.ts';

describe('experiment presets', () => {
  it.each(PRESETS.map((p) => [p.name, p] as const))('%s applies cleanly to the default config', (_name, preset) => {
    expect(validateConfig({ ...DEFAULT_CONFIG, ...preset.values })).toEqual([]);
    expect(Object.keys(preset.values).length).toBeGreaterThan(0);
    for (const key of Object.keys(preset.values)) expect(key in DEFAULT_CONFIG, `${preset.name}: ${key}`).toBe(true);
    expect(preset.explanation.split(/(?<=\.)\s+/).length, `${preset.name}: two sentences`).toBe(2);
  });

  it('includes the four named in the product and looks presets up by name', () => {
    for (const name of ['Reward hacking without KL', 'Tight vs loose clipping', 'PPO vs GRPO', 'Adaptive KL']) {
      expect(PRESETS.map((p) => p.name)).toContain(name);
    }
    expect(presetValues('PPO vs GRPO').advantageEstimator).toBe('group_norm');
    expect(() => presetValues('nope')).toThrow(/no preset named "nope"/);
  });
});
