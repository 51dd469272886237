// Comparisons start clean: a preset's "Run both" and a card's Start begin a new comparison (the
// runs before leave the charts and stay in the list), a run of another task never joins the charts
// by default, colours stay unique among the runs drawn, "New comparison" and "Clear" do what they say.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DEFAULT_CONFIG, type PpoConfig } from '../../src/rl/config.ts';
import { findPreset, presetConfig } from '../../src/rl/presets.ts';
import { createAppStore } from '../../src/store/appStore.ts';
import { comparisonOf, latestComparison } from '../../src/store/comparisons.ts';
import { parseSequence } from '../../src/store/sequencePersist.ts';
import { RUN_COLORS, type RunRecord } from '../../src/store/runs.ts';
import { clientHarness, metrics } from '../helpers/fakeTrainerWorker.ts';

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

const shown = (runs: readonly RunRecord[]) => runs.filter((r) => r.visible).map((r) => r.name);

function begin(store: ReturnType<typeof createAppStore>, name: string, config: Partial<PpoConfig> = {}): RunRecord {
  const s = store.getState();
  expect(s.applyConfig({ ...DEFAULT_CONFIG, ...config })).toEqual([]);
  const run = s.beginRun({ name });
  store.getState().endRun();
  return run;
}

describe('comparisons in the store', () => {
  it('runs of one comparison are overlaid; a run of another task takes the others off the charts', () => {
    const store = createAppStore();
    begin(store, 'a1');
    begin(store, 'a2');
    expect(shown(store.getState().runs)).toEqual(['a1', 'a2']);
    begin(store, 's1', { task: 'sentiment', rewardSource: 'model' });
    expect(shown(store.getState().runs)).toEqual(['s1']);
    // Every run stays in the list, in the same comparison.
    expect(store.getState().runs.map((r) => [r.name, comparisonOf(r)])).toEqual([
      ['a1', 0],
      ['a2', 0],
      ['s1', 0],
    ]);
  });

  it('New comparison hides every run; the runs begun next are drawn on their own, in fresh colours', () => {
    const store = createAppStore();
    begin(store, 'old1');
    begin(store, 'old2');
    store.getState().newComparison();
    expect(store.getState().comparison).toBe(1);
    expect(shown(store.getState().runs)).toEqual([]);
    const n1 = begin(store, 'new1');
    const n2 = begin(store, 'new2');
    expect(shown(store.getState().runs)).toEqual(['new1', 'new2']);
    expect([n1.comparison, n2.comparison]).toEqual([1, 1]);
    // The first colours again: the old runs are off the charts.
    expect([n1.color, n2.color]).toEqual(RUN_COLORS.slice(0, 2));
  });

  it('a picked earlier run joins the charts with a colour no other drawn run has', () => {
    const store = createAppStore();
    const old = begin(store, 'old');
    store.getState().newComparison();
    const now = begin(store, 'now');
    expect(now.color).toBe(old.color);
    store.getState().toggleRun(old.id);
    const runs = store.getState().runs;
    expect(shown(runs)).toEqual(['old', 'now']);
    expect(new Set(runs.map((r) => r.color)).size).toBe(2);
    // The run that was there keeps its colour; the picked one moved.
    expect(runs.find((r) => r.id === now.id)!.color).toBe(now.color);
  });

  it('Clear deletes every run but the active one', () => {
    const store = createAppStore();
    begin(store, 'a');
    begin(store, 'b');
    const active = store.getState().beginRun({ name: 'training' });
    store.getState().clearRuns();
    expect(store.getState().runs.map((r) => r.id)).toEqual([active.id]);
    expect(store.getState().activeRunId).toBe(active.id);
  });

  it('a reload restores the newest comparison as the current one; older saved runs count as comparison 0', () => {
    const store = createAppStore();
    const legacy = { ...begin(store, 'legacy'), comparison: undefined };
    const later = { ...begin(store, 'later'), comparison: 4 };
    const fresh = createAppStore();
    fresh.getState().restoreRuns([legacy, later]);
    expect(fresh.getState().comparison).toBe(4);
    expect(latestComparison([legacy])).toBe(0);
    fresh.getState().showComparison(0);
    expect(shown(fresh.getState().runs)).toEqual(['legacy']);
  });

  it('a Run both record keeps its comparison across a reload, and an old record without one still reads', () => {
    const seq = { preset: 'PPO vs GRPO', arms: [{ label: 'x', config: DEFAULT_CONFIG }], index: 0, budget: 3 };
    expect(parseSequence(JSON.stringify({ ...seq, comparison: 2 })).comparison).toBe(2);
    expect(parseSequence(JSON.stringify(seq)).comparison).toBeUndefined();
    expect(() => parseSequence(JSON.stringify({ ...seq, comparison: -1 }))).toThrow(/comparison malformed/);
  });
});

describe('the flows that begin a comparison', () => {
  it('Run both: the arms are a new comparison; the run before stays in the list, off the charts', async () => {
    const h = clientHarness();
    await h.client.step();
    h.worker.reply(metrics(0));
    await h.advance(300);
    const own = h.activeRun()!;
    h.store.getState().setBudgetOverride(1);
    await h.client.runArms('Tight vs loose clipping');
    h.worker.reply({ type: 'resetDone' });
    h.worker.reply(metrics(0));
    h.worker.reply({ type: 'finished', iter: 1 });
    await h.advance(300);
    h.worker.reply({ type: 'resetDone' });
    h.worker.reply(metrics(0));
    await h.advance(300);
    const s = h.store.getState();
    expect(s.runs.map((r) => r.name)).toEqual([own.name, 'ε = 0.05', 'ε = 0.5']);
    expect(shown(s.runs)).toEqual(['ε = 0.05', 'ε = 0.5']);
    expect(s.runs.map(comparisonOf)).toEqual([0, 1, 1]);
    expect(s.sequence?.comparison).toBe(1);
    // Each arm trains its whole recipe.
    expect(s.runs[1].config).toEqual(presetConfig(findPreset('Tight vs loose clipping')!, 0));
    expect(s.runs[2].config).toEqual(presetConfig(findPreset('Tight vs loose clipping')!, 1));
  });

  it("a card's Start: the preset's whole recipe from fresh weights, to its budget, as a new comparison", async () => {
    const h = clientHarness();
    h.store.getState().setField('clipLow', 0.4);
    await h.client.start();
    h.worker.reply(metrics(0));
    await h.advance(300);
    const before = h.activeRun()!;
    await h.client.startPreset('Learn arithmetic');
    const s = h.store.getState();
    const run = h.activeRun()!;
    expect(run.id).not.toBe(before.id);
    expect(run.config).toEqual(presetConfig(findPreset('Learn arithmetic')!));
    expect(run).toMatchObject({ preset: 'Learn arithmetic', budget: 150, comparison: 1, visible: true });
    expect(s.runs.find((r) => r.id === before.id)!.visible).toBe(false);
    expect(s.runState).toBe('running');
    // The trainer got the recipe once, after a reset to fresh weights, and trains to the budget.
    const commands = h.worker.sent.map((m) => m.type).filter((t) => t !== 'saveState');
    expect(commands.slice(-4)).toEqual(['pause', 'reset', 'setConfig', 'start']);
    expect(h.worker.of('setConfig').at(-1)!.config).toEqual(run.config);
    expect(h.worker.of('start').at(-1)).toEqual({ type: 'start', untilIter: 150 });
  });

  it('New comparison ends the run in progress and takes every run off the charts', async () => {
    const h = clientHarness();
    await h.client.start();
    h.worker.reply(metrics(0));
    await h.advance(300);
    h.client.newComparison();
    const s = h.store.getState();
    expect(s.activeRunId).toBeNull();
    expect(shown(s.runs)).toEqual([]);
    expect(h.worker.of('reset')).toHaveLength(1);
  });
});
