// The clipping view counts a batch's clipped tokens with the clip settings it was trained with, and
// names them; the current settings only give a recount labelled "what if".
import { beforeAll, describe, expect, it } from 'vitest';
import { loadNamespaces } from '../../src/i18n/index.ts';
import { clippedCount, formatClip, ratioHistogram } from '../../src/ui/teach/clipping.ts';

const ratios = [0.5, 0.85, 1.0, 1.15, 1.25, 1.6, 3.5, Number.NaN];
const advs = [1, -1, 1, 1, 1, -1, -1, 1];
const trained = { clipLow: 0.2, clipHigh: 0.2, dualClip: 3 };
const tighter = { clipLow: 0.1, clipHigh: 0.1, dualClip: null };

describe('clipping view: trained settings and the what-if recount', () => {
  beforeAll(() => loadNamespaces(['teach']));
  it('counts the clipped tokens of each advantage sign, as the histogram colours them', () => {
    // A > 0: 0.5, 1.0, 1.15, 1.25 → only 1.25 > 1.2; A < 0: 0.85 (inside), 1.6 (inside), 3.5 > c = 3
    expect(clippedCount(ratios, advs, 1, trained)).toBe(1);
    expect(clippedCount(ratios, advs, -1, trained)).toBe(1);
    // the what-if: ε = 0.1 clips 1.15 and 1.25 for A > 0, 0.85 for A < 0, and no dual clip catches 3.5
    expect(clippedCount(ratios, advs, 1, tighter)).toBe(2);
    expect(clippedCount(ratios, advs, -1, tighter)).toBe(1);
    for (const p of [trained, tighter])
      for (const sign of [1, -1] as const) {
        const red = ratioHistogram(ratios, advs, sign, p, 0, 4, 40).reduce((n, b) => n + b.clipped, 0);
        expect(clippedCount(ratios, advs, sign, p)).toBe(red);
      }
  });

  it('names the settings: one ε when equal, both when not, the dual clip when on', () => {
    expect(formatClip({ clipLow: 0.2, clipHigh: 0.2, dualClip: null })).toBe('ε = 0.2');
    expect(formatClip({ clipLow: 0.2, clipHigh: 0.28, dualClip: 3 })).toBe('ε_low = 0.2, ε_high = 0.28, dual clip c = 3');
  });
});
