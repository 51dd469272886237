// The guided tour, one entry per step: where it points (CSS selectors, the first one on the page
// wins, so a step survives a layout that hides its first choice, e.g. presenter mode's 4 charts).
// What a step says lives in the `tour` namespace under steps.<id> (src/i18n/locales/*/tour.json),
// worded by tourText.ts. Adding a step is adding an entry here and its title and body there.
// This module imports no translations, so the e2e specs can read the steps' ids from it.
import type { Preset } from '../../rl/presets.ts';

/** What a step's text may depend on: the experiment chosen when the tour opens. */
export interface TourContext {
  preset: Pick<Preset, 'name' | 'watch'> | null;
}

export interface TourStep {
  /** Also its key in the `tour` namespace: steps.<id>.title and steps.<id>.body. */
  id: string;
  /** Selectors tried in order; with none on the page the step shows centred, pointing at nothing. */
  anchors: readonly string[];
  side?: 'top' | 'right' | 'bottom' | 'left';
}

export const TOUR_STEPS: readonly TourStep[] = [
  { id: 'loop', anchors: ['.pipeline', '.controls'], side: 'bottom' },
  { id: 'experiments', anchors: ['.presets'], side: 'right' },
  { id: 'start', anchors: ['.controls .btn.primary', '.controls'], side: 'bottom' },
  { id: 'reward', anchors: ['[data-testid="chart-reward_mean"]', '.content'], side: 'left' },
  { id: 'heldout', anchors: ['[data-testid="chart-heldout"]', '.content'], side: 'left' },
  { id: 'kl', anchors: ['[data-testid="chart-kl"]', '[data-testid="chart-kl_token_mean"]', '.content'], side: 'left' },
  { id: 'clipfrac', anchors: ['[data-testid="chart-clipfrac"]', '.content'], side: 'left' },
  { id: 'clipping', anchors: ['#tab-clipping', '.teaching'], side: 'top' },
  { id: 'inside', anchors: ['.teaching [role="tablist"]', '.teaching'], side: 'top' },
];

/** The first element on the page that one of `anchors` selects, or undefined. A bad selector is skipped. */
export function findAnchor(anchors: readonly string[], root: ParentNode = document): Element | undefined {
  for (const selector of anchors) {
    try {
      const el = root.querySelector(selector);
      if (el) return el;
    } catch {
      // An invalid selector points at nothing; the next one may still match.
    }
  }
  return undefined;
}
