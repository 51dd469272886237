// Reading the locale files as flat key → text tables, and finding English left in Chinese text.
import { readdirSync, readFileSync } from 'node:fs';
import glossary from '../../src/i18n/glossary.zh-CN.json' with { type: 'json' };

export const LOCALE_DIR = 'src/i18n/locales';

export function namespaces(locale: string): string[] {
  return readdirSync(`${LOCALE_DIR}/${locale}`)
    .filter((f) => f.endsWith('.json'))
    .map((f) => f.slice(0, -5))
    .sort();
}

/** A namespace's strings by dotted key. */
export function flatStrings(locale: string, ns: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (o: unknown, prefix: string) => {
    if (typeof o === 'string') out.set(prefix, o);
    else if (o && typeof o === 'object') for (const [k, v] of Object.entries(o)) walk(v, prefix ? `${prefix}.${k}` : k);
    else throw new Error(`${locale}/${ns}.json: ${prefix} is neither text nor a group`);
  };
  walk(JSON.parse(readFileSync(`${LOCALE_DIR}/${locale}/${ns}.json`, 'utf8')), '');
  return out;
}

/** The key without its plural suffix (English has _one/_other, Chinese _other only). */
export const pluralBase = (key: string) => key.replace(/_(zero|one|two|few|many|other)$/, '');

/** The interpolation variables a string uses: {{name}}, {{name, number}}; nesting $t(key). */
export function variables(text: string): string[] {
  const vars = [...text.matchAll(/\{\{\s*([\w.]+)[^}]*\}\}/g)].map((m) => m[1]);
  const nested = [...text.matchAll(/\$t\(([^)]+)\)/g)].map((m) => `$t(${m[1]})`);
  return [...new Set([...vars, ...nested])].sort();
}

const KEEP = new Set(glossary.keep.flatMap((w) => w.split(/\s+/)).map((w) => w.toLowerCase()));

/**
 * Latin words in a Chinese string that are neither kept terms (glossary `keep`), nor identifiers
 * (snake_case, camelCase, with digits), nor inside code (backticks, <code>), nor interpolations.
 */
export function englishLeftIn(text: string): string[] {
  const stripped = text
    .replace(/\{\{[^}]*\}\}/g, ' ')
    .replace(/\$t\([^)]*\)/g, ' ')
    .replace(/`[^`]*`/g, ' ')
    .replace(/<code>.*?<\/code>/g, ' ')
    .replace(/<\/?\w+[^>]*>/g, ' ');
  return [...stripped.matchAll(/[A-Za-z][A-Za-z0-9_+.'-]*/g)].flatMap((m) => {
    const word = m[0].replace(/[.'-]+$/, '');
    const before = stripped[m.index - 1] ?? '';
    const after = stripped[m.index + m[0].length] ?? '';
    // A metric's path in the engines' logs (critic/rewards/mean) is an identifier.
    if (before === '/' || after === '/') return [];
    // Notation, not English: a subscript or superscript (π_old, ε_low, L^V), a derivative (∂loss) or an operator (log π, max(…)).
    if (before === '_' || before === '^' || before === '∂' || MATH_OPERATORS.has(word)) return [];
    return keptOrIdentifier(word) ? [] : [word];
  });
}

function keptOrIdentifier(word: string): boolean {
  if (word.length < 3) return true;
  if (/[_0-9]/.test(word) || /[a-z][A-Z]/.test(word) || /^[A-Z0-9+-]+$/.test(word)) return true; // identifiers, acronyms
  return KEEP.has(word.toLowerCase());
}

const MATH_OPERATORS = new Set(['log', 'exp', 'max', 'min', 'clip', 'mean', 'std', 'var', 'sgn', 'softmax', 'sigmoid', 'argmax']);

export const GLOSSARY_TERMS = glossary.terms as { en: string; zh: string; avoid?: string[] }[];
