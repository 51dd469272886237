// One config schema: KNOBS (src/rl/config.ts) has one row per knob, and the type, the defaults, the
// validator's rules and the page's fields are all read off it. The verl / OpenRLHF names in the
// rows are the keys the exported jobs actually set from those knobs.
import { describe, expect, expectTypeOf, it } from 'vitest';
import { verlCommand } from '../../src/export/verl.ts';
import { openRlhfCommand } from '../../src/export/openrlhf.ts';
import { planJob } from '../../src/export/plan.ts';
import { CHOICE_RULES, CONFIG_KEYS, DEFAULT_CONFIG, KNOBS, NUMERIC_RULES, TEXT_RULES, validateConfig, type PpoConfig } from '../../src/rl/config.ts';
import type { TaskName } from '../../src/tasks/task.ts';
import type { KlEstimator } from '../../src/reference/kl.ts';
import { FIELDS } from '../../src/ui/configFields.ts';

describe('one row per knob', () => {
  it('types come from the rows', () => {
    expectTypeOf<PpoConfig['task']>().toEqualTypeOf<TaskName>();
    expectTypeOf<PpoConfig['klEstimator']>().toEqualTypeOf<KlEstimator>();
    expectTypeOf<PpoConfig['dualClip']>().toEqualTypeOf<number | null>();
    expectTypeOf<PpoConfig['useKlLoss']>().toEqualTypeOf<boolean>();
    expectTypeOf<PpoConfig['nLayer']>().toEqualTypeOf<number>();
    expectTypeOf<PpoConfig['rewardFunction']>().toEqualTypeOf<string>();
  });

  it('defaults, rules and page fields each cover every knob exactly once, and the defaults pass the validator', () => {
    expect(Object.keys(DEFAULT_CONFIG)).toEqual(CONFIG_KEYS);
    expect([...Object.keys(NUMERIC_RULES), ...Object.keys(CHOICE_RULES), ...Object.keys(TEXT_RULES)].sort()).toEqual([...CONFIG_KEYS].sort());
    expect(FIELDS.map((f) => f.key)).toEqual(CONFIG_KEYS);
    expect(validateConfig(DEFAULT_CONFIG)).toEqual([]);
    for (const k of CONFIG_KEYS) {
      const r = KNOBS[k];
      expect(r.label.length, k).toBeGreaterThan(0);
      expect(r.help.length, k).toBeGreaterThan(0);
    }
  });

  it('a row changes the validator: a knob outside its range is reported with the row range', () => {
    expect(validateConfig({ ...DEFAULT_CONFIG, nLayer: 7 })[0].message).toBe('nLayer = 7: too large; allowed: an integer from 1 to 6');
    expect(validateConfig({ ...DEFAULT_CONFIG, task: 'x' as TaskName })[0].message).toBe('task = "x": allowed: "arithmetic", "sentiment", "stop"');
    expect(validateConfig({ ...DEFAULT_CONFIG, rewardFunction: 'x'.repeat(8193) })[0].message).toBe('rewardFunction: 8193 bytes; allowed: at most 8192 bytes');
    expect(validateConfig({ ...DEFAULT_CONFIG, rewardFunction: 3 as unknown as string })[0].field).toBe('rewardFunction');
  });
});

describe("each row's verl / OpenRLHF name is what the exported job sets", () => {
  // The default config, and one with every conditional knob switched on, so each mapped key appears.
  const allOn: PpoConfig = {
    ...DEFAULT_CONFIG,
    klController: 'adaptive',
    useKlLoss: true,
    dualClip: 3,
    tisCap: 2,
    rolloutRs: 'seq_max_k2',
    dynamicSampling: true,
    overlongBuffer: 2,
    lossMode: 'gspo',
    advantageEstimator: 'group_norm',
    topK: 5,
  };
  const configs = [
    DEFAULT_CONFIG,
    allOn,
    { ...allOn, useKlLoss: false, klInReward: true },
    { ...allOn, lossMode: 'sapo' as const },
    { ...allOn, lossMode: 'clip_cov' as const },
    { ...allOn, lossMode: 'kl_cov' as const },
    { ...allOn, icepopLower: 0.5 },
  ];
  const verlKeys = new Set(configs.flatMap((c) => verlCommand(planJob(c, { engine: 'verl', gpus: 1, trainRows: 16 })).overrides.map((o) => o.key)));
  const openrlhfFlags = new Set(configs.flatMap((c) => openRlhfCommand(planJob(c, { engine: 'openrlhf', gpus: 1, trainRows: 16 })).flags.map((f) => f.flag)));

  it.each(CONFIG_KEYS.filter((k) => KNOBS[k].verl))('%s → verl', (k) => {
    expect(verlKeys).toContain(KNOBS[k].verl);
  });
  it.each(CONFIG_KEYS.filter((k) => KNOBS[k].openrlhf))('%s → OpenRLHF', (k) => {
    expect(openrlhfFlags).toContain(KNOBS[k].openrlhf);
  });
});
