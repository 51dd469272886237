// A preset applies its whole recipe: every knob it does not name returns to its default, so the
// settings after preset A then preset B are exactly B's on a fresh page, for every ordered pair of
// presets and arms, through the card (choosePreset) and through "Run both" (planArms). The model
// size alone follows the task's kept SFT model.
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, type PpoConfig } from '../../src/rl/config.ts';
import { PRESETS, presetArms, presetConfig, findPreset } from '../../src/rl/presets.ts';
import { createAppStore } from '../../src/store/appStore.ts';
import { planArms } from '../../src/store/presetRun.ts';
import { useSft, type KeptSftModel } from '../../src/store/sftState.ts';
import { recipeParts } from '../../src/ui/presetRecipe.ts';

/** Every (preset, arm) the page can apply: a card applies arm 0, Run both every arm. */
const ARMS = PRESETS.flatMap((p) => presetArms(p).map((a, i) => ({ preset: p, arm: i, id: `${p.name} [${a.label}]` })));

function fresh(name: string, arm: number): PpoConfig {
  const store = createAppStore();
  expect(store.getState().choosePreset(name, arm)).toEqual([]);
  return store.getState().config;
}

afterEach(() => {
  for (const task of Object.keys(useSft.getState().models)) useSft.getState().dropModel(task);
});

describe('a preset applies its whole recipe', () => {
  it("fresh, each arm is the defaults with the preset's and the arm's values, and is valid", () => {
    for (const { preset, arm, id } of ARMS) {
      const want = { ...DEFAULT_CONFIG, ...preset.values, ...(preset.arms?.[arm]?.values ?? {}) };
      expect(presetConfig(preset, arm), id).toEqual(want);
      expect(fresh(preset.name, arm), id).toEqual(want);
    }
  });

  it.each(ARMS.map((a) => [a.id, a] as const))('after %s, every preset and arm gives exactly its fresh config', (_id, a) => {
    for (const b of ARMS) {
      const store = createAppStore();
      expect(store.getState().choosePreset(a.preset.name, a.arm)).toEqual([]);
      expect(store.getState().choosePreset(b.preset.name, b.arm), b.id).toEqual([]);
      expect(store.getState().config, `${a.id} then ${b.id}`).toEqual(fresh(b.preset.name, b.arm));
      expect(store.getState().preset).toBe(b.preset.name);
      // Run both plans every arm from the recipe too, not from the settings A left.
      const plan = planArms(b.preset);
      if (!plan.ok) throw new Error(plan.problems.join('; '));
      expect(plan.arms[b.arm].config, `${a.id} then Run both of ${b.preset.name}`).toEqual(fresh(b.preset.name, b.arm));
    }
  });

  it('settings edited by hand do not leak into the next preset either', () => {
    const store = createAppStore();
    store.getState().choosePreset('Tight vs loose clipping', 1);
    for (const [k, v] of [
      ['seed', 7],
      ['temperature', 0.7],
      ['entropyCoef', 0.01],
      ['valueClip', null],
    ] as const)
      expect(store.getState().setField(k, v)).toEqual([]);
    store.getState().choosePreset('Reward hacking without KL');
    expect(store.getState().config).toEqual(fresh('Reward hacking without KL', 0));
  });

  it('the case teachers met: "Reward hacking without KL" after "Tight vs loose clipping" (ε = 0.5) trains with ε = 0.2', () => {
    const store = createAppStore();
    store.getState().choosePreset('Tight vs loose clipping', 1);
    expect(store.getState().config.clipLow).toBe(0.5);
    store.getState().choosePreset('Reward hacking without KL');
    expect(store.getState().config).toMatchObject({ clipLow: DEFAULT_CONFIG.clipLow, clipHigh: DEFAULT_CONFIG.clipHigh, ppoEpochs: 1, actorLr: 1e-3 });
    expect(DEFAULT_CONFIG.clipLow).toBe(0.2);
  });

  it('an unknown preset or arm changes nothing', () => {
    const store = createAppStore();
    store.getState().choosePreset('Learn arithmetic');
    const before = store.getState().config;
    expect(store.getState().choosePreset('No such preset')[0].field).toBe('preset');
    expect(() => store.getState().choosePreset('Learn arithmetic', 3)).toThrow(/has no arm 3/);
    expect(store.getState().config).toBe(before);
    expect(store.getState().preset).toBe('Learn arithmetic');
  });

  it("the model size follows the task's kept SFT model, for the card and for every arm of Run both", () => {
    const dims = { nLayer: 3, nHead: 4, dModel: 96 };
    useSft.getState().setModel({ task: 'arithmetic', origin: 'tab', dims, meta: null, bytes: new ArrayBuffer(0), savedAt: 0 } as KeptSftModel);
    const store = createAppStore();
    store.getState().choosePreset('Learn arithmetic');
    expect(store.getState().config).toEqual({ ...presetConfig(findPreset('Learn arithmetic')!), ...dims });
    const plan = planArms(findPreset('PPO vs GRPO')!, (task) => useSft.getState().models[task]?.dims);
    if (!plan.ok) throw new Error(plan.problems.join('; '));
    for (const arm of plan.arms) expect(arm.config).toMatchObject(dims);
    // Another task's preset keeps the shipped size.
    store.getState().choosePreset('Reward hacking without KL');
    expect(store.getState().config).toEqual(presetConfig(findPreset('Reward hacking without KL')!));
  });
});

describe("a card names each arm's estimator and critic", () => {
  it.each(PRESETS.map((p) => [p.name, p] as const))('%s: the estimator and critic the card names are the ones its arms train', (_name, preset) => {
    const parts = recipeParts(preset);
    const arms = presetArms(preset);
    const named = (i: number) => (parts.length === 1 ? parts[0] : parts[i]);
    if (parts.length > 1) expect(parts.map((p) => p.arm)).toEqual(arms.map((a) => a.label));
    for (const i of arms.keys()) {
      const c = presetConfig(preset, i);
      expect(named(i).estimator).toBe(c.advantageEstimator);
      expect(named(i).critic).toBe(c.advantageEstimator === 'gae');
    }
  });

  it('"Tight vs loose clipping" says RLOO without a critic; "PPO vs GRPO" names both arms', () => {
    expect(recipeParts(findPreset('Tight vs loose clipping')!)).toEqual([{ arm: null, estimator: 'rloo', critic: false }]);
    expect(recipeParts(findPreset('PPO vs GRPO')!)).toEqual([
      { arm: 'PPO (GAE)', estimator: 'gae', critic: true },
      { arm: 'GRPO', estimator: 'group_norm', critic: false },
    ]);
  });
});
