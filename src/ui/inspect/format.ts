// Pure helpers of the Inspect tab: how a number is shown in the table, how a what-if field's text
// becomes a knob value (or a message naming the field and its range), and a response as text.
import { describeRange, NUMERIC_RULES, type NumRule } from '../../rl/config.ts';
import type { InspectKnobs } from '../../rl/inspect/index.ts';

/** A table number: 4 significant digits, exponent form outside [1e-3, 1e4), '—' for none. */
export function formatNumber(x: number | null | undefined): string {
  if (x === null || x === undefined) return '—';
  if (Number.isNaN(x)) return 'NaN';
  if (!Number.isFinite(x)) return x > 0 ? '∞' : '−∞';
  if (x === 0) return '0';
  const ax = Math.abs(x);
  const s = ax >= 1e-3 && ax < 1e4 ? x.toFixed(Math.max(0, 3 - Math.floor(Math.log10(ax)))) : x.toExponential(2);
  return s.replaceAll('-', '−');
}

/** The full value for a cell's title (what a reader copies or checks by hand). */
export function fullNumber(x: number | null | undefined): string {
  return x === null || x === undefined ? '' : String(x);
}

/** Whether a what-if value differs visibly from the trained one. */
export function differs(a: number | null | undefined, b: number | null | undefined): boolean {
  if (a === null || a === undefined || b === null || b === undefined) return a !== b;
  return Math.abs(a - b) > 1e-12 * Math.max(1, Math.abs(a));
}

/** The numeric knobs the what-if edits, with the config's rules. */
export const WHAT_IF_NUMBERS = ['klCoef', 'klLossCoef', 'gamma', 'lam', 'clipLow', 'clipHigh', 'dualClip'] as const;
export type WhatIfNumber = (typeof WHAT_IF_NUMBERS)[number];

export function ruleOf(key: WhatIfNumber): NumRule {
  return NUMERIC_RULES[key] as NumRule;
}

export type Parsed = { ok: true; value: number | null } | { ok: false; range: string };

/** A field's text as a knob value, checked against the config's range ('' is null where allowed); the
 * range in English words for the CLIs and tests (the page says it with rangeText, in its language). */
export function parseKnob(key: WhatIfNumber, text: string): Parsed {
  const r = ruleOf(key);
  const range = describeRange(r);
  const s = text.trim();
  if (s === '') return r.nullable ? { ok: true, value: null } : { ok: false, range };
  const v = Number(s);
  if (!Number.isFinite(v)) return { ok: false, range };
  if (r.integer && !Number.isInteger(v)) return { ok: false, range };
  if (v < r.min || (r.minOpen && v === r.min)) return { ok: false, range };
  if (v > r.max || (r.maxOpen && v === r.max)) return { ok: false, range };
  return { ok: true, value: v };
}

/** A knob value as its field's text. */
export function knobText(v: number | null): string {
  return v === null ? '' : String(v);
}

/** The knobs a what-if may change, compared: true when every one equals the trained value. */
export function sameKnobs(a: InspectKnobs, b: InspectKnobs): boolean {
  return (Object.keys(a) as (keyof InspectKnobs)[]).every((k) => a[k] === b[k]);
}

/** A response's action tokens as text. */
export function responseText(tokenText: readonly string[], mask: ArrayLike<number>, row: number, A: number): string {
  let s = '';
  for (let t = 0; t < A; t++) if (mask[row * A + t] !== 0) s += tokenText[row * A + t] ?? '';
  return s;
}
