// A link's settings enter the store in one update and only where they differ: a plain link (or one
// that says what the settings already are) notifies no subscriber, so the page opens without
// re-rendering every panel that reads the config.
import { describe, expect, it } from 'vitest';
import { checkConfig, DEFAULT_CHECKED } from '../../src/rl/config.ts';
import { createAppStore } from '../../src/store/appStore.ts';
import { parseQuery } from '../../src/store/urlConfig.ts';

function linkOf(search: string) {
  const p = parseQuery(search, DEFAULT_CHECKED);
  return { config: p.config, hidden: p.hidden, budgetOverride: p.budget, pendingRewardFunction: p.pendingRewardFunction };
}

function counted() {
  const store = createAppStore();
  let updates = 0;
  store.subscribe(() => updates++);
  return { store, updates: () => updates };
}

describe('applyLink', () => {
  it('changes nothing, and notifies nobody, for a link without settings or one that repeats them', () => {
    for (const search of ['', '?lang=en', `?clipLow=${DEFAULT_CHECKED.clipLow}`]) {
      const { store, updates } = counted();
      const before = store.getState();
      store.getState().applyLink(linkOf(search));
      expect(updates(), search).toBe(0);
      expect(store.getState().config).toBe(before.config);
      expect(store.getState().hidden).toBe(before.hidden);
    }
  });

  it('applies a config, hidden knobs, a budget and a pending reward function in one update', () => {
    const { store, updates } = counted();
    const link = linkOf('?clipLow=0.3&hide=klCoef,gamma&budget=4&rewardFunction=return%201');
    store.getState().applyLink(link);
    expect(updates()).toBe(1);
    const s = store.getState();
    expect(s.config.clipLow).toBe(0.3);
    expect([...s.hidden].sort()).toEqual(['gamma', 'klCoef']);
    expect(s.budgetOverride).toBe(4);
    expect(s.pendingRewardFunction).toBe(link.pendingRewardFunction);
    expect(link.pendingRewardFunction).not.toBeNull();
  });

  it('keeps the objects it does not change', () => {
    const { store, updates } = counted();
    const config = store.getState().config;
    store.getState().applyLink(linkOf('?hide=gamma'));
    expect(updates()).toBe(1);
    expect(store.getState().config).toBe(config);
    expect([...store.getState().hidden]).toEqual(['gamma']);
    const hidden = store.getState().hidden;
    const { config: changed } = checkConfig({ ...config, clipLow: 0.25 });
    store.getState().applyLink({ config: changed!, hidden: ['gamma'], budgetOverride: null, pendingRewardFunction: null });
    expect(updates()).toBe(2);
    expect(store.getState().hidden).toBe(hidden);
    expect(store.getState().config.clipLow).toBe(0.25);
  });
});
