// Random hostile values for the fuzzers, all drawn from one seeded Rng so a case number
// reproduces its input.
import type { Rng } from '../util/rng.ts';

export function pick<T>(rng: Rng, xs: readonly T[]): T {
  return xs[rng.int(0, xs.length)];
}

export function chance(rng: Rng, p: number): boolean {
  return rng.next() < p;
}

const TEN_KB = 'a'.repeat(10_240);

/** Strings a URL, a form field or a JSON file may carry. */
export const HOSTILE_STRINGS: readonly string[] = [
  '',
  ' ',
  'NaN',
  'nan',
  'Infinity',
  '-Infinity',
  'inf',
  '1e309',
  '-1e309',
  '1e308',
  '9007199254740993',
  '-0',
  '0x10',
  '0b1',
  '1_000',
  '1e-400',
  '.5',
  '5.',
  '+3',
  '--1',
  '1,5',
  '١٢',
  'null',
  'undefined',
  'true',
  'false',
  '[]',
  '{}',
  '[1]',
  '{"a":1}',
  '<script>window.__pwned=1</script>',
  '"><img src=x onerror="window.__pwned=1">',
  'javascript:window.__pwned=1',
  '%00',
  '\u0000',
  '\u202e',
  '😀',
  '\ud800',
  "'; DROP TABLE runs;--",
  '__proto__',
  'constructor',
  'toString',
  TEN_KB,
  `1${'0'.repeat(400)}`,
];

/** Numbers at and past every edge (JSON cannot carry NaN/Infinity; callers decide). */
export const EDGE_NUMBERS: readonly number[] = [
  0,
  -0,
  1,
  -1,
  0.5,
  2,
  3,
  7,
  8,
  64,
  65,
  100,
  1e-300,
  -1e-300,
  1e300,
  -1e300,
  Number.MAX_VALUE,
  -Number.MAX_VALUE,
  Number.MIN_VALUE,
  2 ** 31,
  2 ** 31 - 1,
  2 ** 32,
  2 ** 53,
  2 ** 53 + 2,
  -(2 ** 53),
  NaN,
  Infinity,
  -Infinity,
];

export function randomString(rng: Rng, maxLen = 12): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyzABCXYZ0123456789_-.,=&?#%+ <>"\'/\\;:\n\t{}[]()😀é';
  const chars = [...alphabet];
  let s = '';
  const n = rng.int(0, maxLen + 1);
  for (let i = 0; i < n; i++) s += pick(rng, chars);
  return s;
}

export function randomNumber(rng: Rng): number {
  switch (rng.int(0, 4)) {
    case 0:
      return pick(rng, EDGE_NUMBERS);
    case 1:
      return rng.int(-1000, 1000);
    case 2:
      return rng.uniform(-10, 10);
    default:
      return rng.normal() * 10 ** rng.int(-10, 12);
  }
}

/** Any JSON-representable value (NaN/±Infinity kept where `jsonOnly` is false). */
export function randomValue(rng: Rng, depth = 0, jsonOnly = false): unknown {
  const k = rng.int(0, depth > 2 ? 6 : 9);
  switch (k) {
    case 0:
      return null;
    case 1:
      return chance(rng, 0.5);
    case 2:
    case 3: {
      const x = randomNumber(rng);
      return jsonOnly && !Number.isFinite(x) ? null : x;
    }
    case 4:
      return pick(rng, HOSTILE_STRINGS);
    case 5:
      return randomString(rng);
    case 6:
      return Array.from({ length: rng.int(0, 4) }, () => randomValue(rng, depth + 1, jsonOnly));
    case 7: {
      const o: Record<string, unknown> = {};
      for (let i = rng.int(0, 4); i > 0; i--) o[randomString(rng, 6)] = randomValue(rng, depth + 1, jsonOnly);
      return o;
    }
    default:
      return undefined;
  }
}

/** A short printable sketch of an input for a defect report. */
export function sketch(x: unknown, max = 240): string {
  let s: string;
  try {
    s = typeof x === 'string' ? JSON.stringify(x) : JSON.stringify(x, (_k, v) => (typeof v === 'number' && !Number.isFinite(v) ? String(v) : v));
  } catch {
    s = String(x);
  }
  s ??= String(x);
  return s.length > max ? `${s.slice(0, max)}… (${s.length} chars)` : s;
}
