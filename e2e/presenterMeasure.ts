// What presenter mode promises a projector at 1280×720, measured in the page: nothing wider than
// its box, every control at least 20 px (its text, and its box for a checkbox), the median text at
// least 20 px, and every chart's axis labels inside the chart. One page.evaluate, so a spec can
// check it on several views and languages.
import type { Page } from '@playwright/test';

export interface PresenterMeasure {
  /** How far the page is wider than the window. */
  pageOverflow: number;
  /** Boxes with a sideways scrollbar that is not meant to be there, with how far they overflow. */
  overflowing: string[];
  /** Controls whose text or box is under 20 px, with their size. */
  smallControls: string[];
  /** Median font size in px of the visible text (HTML text and SVG labels, as drawn). */
  medianText: number;
  /** Text elements drawn under 20 px, as "size: text", the smallest first (for a failing report). */
  smallText: string[];
  /** Axis labels drawn outside their chart's box. */
  clippedTicks: string[];
}

/** Boxes that scroll sideways on purpose: the token table, the reverse scan's strip, code, a formula's last resort, the tab strip. */
export const SIDEWAYS_SCROLLERS = ['.inspect-table-wrap', '.gae-strip', '.experience-wrap', '.formula-fit', 'pre', '.tabs', '.preset-cards'];

export function measurePresenter(page: Page): Promise<PresenterMeasure> {
  return page.evaluate((scrollers) => {
    const shown = (el: Element) => {
      if (el.closest('.visually-hidden, [hidden]')) return false;
      const r = el.getBoundingClientRect();
      if (r.width < 1 || r.height < 1) return false;
      const cs = getComputedStyle(el);
      return cs.visibility !== 'hidden' && cs.display !== 'none';
    };
    const whereIs = (el: Element) => {
      const id = el.id ? `#${el.id}` : '';
      const cls = typeof el.className === 'string' && el.className ? `.${el.className.trim().split(/\s+/).join('.')}` : '';
      const text = (el.textContent ?? el.getAttribute('aria-label') ?? '').trim().replace(/\s+/g, ' ').slice(0, 30);
      return `${el.tagName.toLowerCase()}${id}${cls} “${text}”`;
    };
    const all = [...document.body.querySelectorAll('*')];
    const overflowing: string[] = [];
    for (const el of all) {
      if (!(el instanceof HTMLElement) || !shown(el)) continue;
      const ox = getComputedStyle(el).overflowX;
      if ((ox === 'auto' || ox === 'scroll') && el.scrollWidth > el.clientWidth + 1 && !scrollers.some((s) => el.matches(s))) {
        overflowing.push(`${whereIs(el)} by ${el.scrollWidth - el.clientWidth}px`);
      }
    }
    const smallControls: string[] = [];
    for (const el of document.querySelectorAll('button, select, input:not([type="hidden"]), textarea, summary, [role="tab"], [role="switch"], [role="option"], a[href]')) {
      if (!shown(el)) continue;
      const r = el.getBoundingClientRect();
      const type = el instanceof HTMLInputElement ? el.type : '';
      // A radio inside a segmented label is the label's transparent hit area: the label is the control.
      if (type === 'radio' && getComputedStyle(el).opacity === '0') continue;
      if (type === 'checkbox' || type === 'radio' || type === 'range') {
        if (r.height < 20 - 0.5) smallControls.push(`${whereIs(el)} box ${r.height.toFixed(1)}px`);
        continue;
      }
      const px = Number.parseFloat(getComputedStyle(el).fontSize);
      if (px < 20 - 0.05) smallControls.push(`${whereIs(el)} text ${px.toFixed(1)}px`);
      if (r.height < 20 - 0.5) smallControls.push(`${whereIs(el)} box ${r.height.toFixed(1)}px`);
    }
    const sizes: { px: number; what: string }[] = [];
    for (const el of all) {
      const own = [...el.childNodes].some((n) => n.nodeType === Node.TEXT_NODE && (n.textContent ?? '').trim() !== '');
      if (!own || !shown(el)) continue;
      let px = Number.parseFloat(getComputedStyle(el).fontSize);
      if (el instanceof SVGElement) {
        const svg = el.ownerSVGElement;
        const m = svg?.getScreenCTM();
        if (m) px *= Math.hypot(m.a, m.b);
      }
      // KaTeX sizes its glyphs itself; the formula's own font size is what the reader sees.
      const formula = el.closest('.formula');
      if (formula) px = Number.parseFloat(getComputedStyle(formula).fontSize);
      sizes.push({ px, what: whereIs(el) });
    }
    const sorted = sizes.map((s) => s.px).sort((a, b) => a - b);
    const medianText = sorted.length ? sorted[Math.floor(sorted.length / 2)] : 0;
    const smallText = sizes
      .filter((s) => s.px < 20 - 0.05)
      .sort((a, b) => a.px - b.px)
      .slice(0, 40)
      .map((s) => `${s.px.toFixed(1)}: ${s.what}`);
    const clippedTicks: string[] = [];
    for (const svg of document.querySelectorAll('svg.recharts-surface')) {
      if (!shown(svg)) continue;
      const box = svg.getBoundingClientRect();
      for (const t of svg.querySelectorAll('.recharts-cartesian-axis-tick text, .recharts-cartesian-axis-tick-value')) {
        const r = t.getBoundingClientRect();
        if (r.width === 0) continue;
        if (r.left < box.left - 0.5 || r.right > box.right + 0.5 || r.top < box.top - 0.5 || r.bottom > box.bottom + 0.5)
          clippedTicks.push(`${whereIs(svg.closest('figure') ?? svg)}: “${t.textContent}”`);
      }
    }
    return { pageOverflow: document.documentElement.scrollWidth - window.innerWidth, overflowing, smallControls, medianText, smallText, clippedTicks };
  }, SIDEWAYS_SCROLLERS);
}
