// The guided tour's table and memory: every step points somewhere and says something, the Start
// step carries the chosen preset's "what to watch" line, and a storage that throws never breaks
// the page (the tour is then remembered for the page's lifetime).
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadNamespaces, switchLocale, t } from '../../src/i18n/index.ts';
import { PRESETS } from '../../src/rl/presets.ts';
import { findAnchor, TOUR_STEPS } from '../../src/ui/tour/steps.ts';
import { stepBody, stepTitle } from '../../src/ui/tour/tourText.ts';
import { markTourSeen, resetTourMemoryForTests, shouldInvite, TOUR_STORAGE_KEY, type TourStorage, tourSeen } from '../../src/ui/tour/tourMemory.ts';

function memoryStorage(): TourStorage & { data: Map<string, string> } {
  const data = new Map<string, string>();
  return { data, getItem: (k) => data.get(k) ?? null, setItem: (k, v) => void data.set(k, v) };
}

const throwing: TourStorage = {
  getItem: () => {
    throw new Error('SecurityError');
  },
  setItem: () => {
    throw new Error('QuotaExceededError');
  },
};

describe('tour steps', () => {
  beforeAll(() => loadNamespaces(['tour']));

  it('has unique ids, anchors, a title and a body for every step, ending at the teaching views', () => {
    const ids = TOUR_STEPS.map((s) => s.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const step of TOUR_STEPS) {
      expect(step.anchors.length, step.id).toBeGreaterThan(0);
      expect(stepTitle(step).length, step.id).toBeGreaterThan(0);
      expect(stepTitle(step), step.id).not.toContain('steps.');
      expect(stepBody(step, { preset: null }).length, step.id).toBeGreaterThan(40);
    }
    expect(ids.slice(0, 3)).toEqual(['loop', 'experiments', 'start']);
    expect(TOUR_STEPS.at(-1)?.anchors[0]).toBe('.teaching [role="tablist"]');
    for (const id of ['reward', 'heldout', 'kl', 'clipfrac', 'clipping']) expect(ids).toContain(id);
  });

  it('shows the chosen preset’s “what to watch” line in the Start step, and says to pick one without', () => {
    const start = TOUR_STEPS.find((s) => s.id === 'start')!;
    for (const p of PRESETS) expect(stepBody(start, { preset: p })).toContain(p.watch);
    expect(stepBody(start, { preset: null })).toMatch(/pick a card/);
  });

  it('falls back to “no preset” when reading the preset throws', () => {
    const start = TOUR_STEPS.find((s) => s.id === 'start')!;
    const fragile = {
      name: 'a',
      get watch(): string {
        throw new Error('boom');
      },
    };
    expect(stepBody(start, { preset: fragile })).toBe(stepBody(start, { preset: null }));
  });

  it('finds the first anchor on the page and skips invalid selectors', () => {
    // A stand-in for the page: the selectors it knows, and one it rejects as invalid.
    const found = { id: 'found' } as unknown as Element;
    const root = {
      querySelector: (sel: string) => {
        if (sel === '[[bad') throw new SyntaxError('not a selector');
        return sel === '.second' ? found : null;
      },
    } as unknown as ParentNode;
    expect(findAnchor(['.missing', '[[bad', '.second'], root)).toBe(found);
    expect(findAnchor(['.missing'], root)).toBeUndefined();
  });

  it('hands driver.js its own {{current}} / {{total}} placeholders in the progress text, in either language', async () => {
    expect(t('tour:progress', { current: '{{current}}', total: '{{total}}' })).toBe('Step {{current}} of {{total}}');
    await switchLocale('zh-CN');
    try {
      expect(t('tour:progress', { current: '{{current}}', total: '{{total}}' })).toBe('第 {{current}} / {{total}} 步');
      expect(stepBody(TOUR_STEPS.find((s) => s.id === 'clipfrac')!, { preset: null })).toContain('概率比 π_new / π_old 落到');
    } finally {
      await switchLocale('en');
    }
  });

  it('counts its own steps in the invitation', () => {
    expect(t('tour:inviteBody', { steps: TOUR_STEPS.length })).toContain(`${TOUR_STEPS.length}-step tour`);
  });
});

describe('tour memory', () => {
  afterEach(() => resetTourMemoryForTests());

  it('remembers a finished or dismissed tour in storage', () => {
    const storage = memoryStorage();
    expect(tourSeen(storage)).toBe(false);
    markTourSeen(storage);
    expect(storage.data.get(TOUR_STORAGE_KEY)).toBe('done');
    resetTourMemoryForTests();
    expect(tourSeen(storage)).toBe(true);
  });

  it('survives a storage that throws or is missing: remembered for this page only', () => {
    expect(tourSeen(throwing)).toBe(false);
    expect(() => markTourSeen(throwing)).not.toThrow();
    expect(tourSeen(throwing)).toBe(true);
    resetTourMemoryForTests();
    expect(tourSeen(null)).toBe(false);
    markTourSeen(null);
    expect(tourSeen(null)).toBe(true);
  });

  it('invites a first visit only, and never a browser driven by automation', () => {
    expect(shouldInvite(false, false)).toBe(true);
    expect(shouldInvite(true, false)).toBe(false);
    expect(shouldInvite(false, true)).toBe(false);
  });
});
