// The settings panel's messages for a value that fits its own range but not the other settings:
// knobs named by their labels, and the values that would be accepted listed where that is cheap.
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, validateConfig, type PpoConfig } from '../../src/rl/config.ts';
import { acceptedValues, fieldProblemText, withLabels } from '../../src/ui/fieldProblems.ts';

const problemsOf = (c: Partial<PpoConfig>) => validateConfig({ ...DEFAULT_CONFIG, ...c } as PpoConfig & Record<string, unknown>);

describe('cross-field problems in the settings panel', () => {
  it('names the knobs by their labels and lists the heads that divide the width', () => {
    const config = { ...DEFAULT_CONFIG, dModel: 64 };
    const problems = problemsOf({ dModel: 64, nHead: 3 });
    expect(problems.length).toBeGreaterThan(0);
    const text = fieldProblemText('nHead', 'Attention heads', problems, config);
    expect(text).toMatch(/^Not applied: Attention heads = 3: must divide Model width/);
    expect(text).not.toMatch(/\bnHead\b|\bdModel\b/);
    expect(text).toMatch(/With the other settings as they are, Attention heads can be 1, 2, 4, 8\.$/);
    expect(acceptedValues('nHead', config)).toEqual([1, 2, 4, 8]);
  });

  it('collapses runs of accepted integers and says when a knob is not searched', () => {
    const config = { ...DEFAULT_CONFIG, dynamicSampling: true };
    const accepted = acceptedValues('samplesPerPrompt', config)!;
    expect(accepted[0]).toBe(2); // dynamic sampling needs at least two samples per prompt
    const text = fieldProblemText('samplesPerPrompt', 'Samples per prompt', problemsOf({ dynamicSampling: true, samplesPerPrompt: 1 }), config);
    expect(text).toMatch(new RegExp(`Samples per prompt can be 2–${accepted.at(-1)}\\.$`));
    // A float knob: its own range instead of a list.
    expect(acceptedValues('clipLow', DEFAULT_CONFIG)).toBeNull();
  });

  it('replaces everyday-word keys only where they are set', () => {
    expect(withLabels('seed = 3: too large')).toBe('Seed = 3: too large');
    expect(withLabels('the seed of the run')).toBe('the seed of the run');
    expect(withLabels('klController = "adaptive": needs KL in the reward or the KL loss enabled')).toBe(
      'KL controller = "adaptive": needs KL in the reward or the KL loss enabled',
    );
  });
});
