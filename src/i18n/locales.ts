// The page's two languages and how one is chosen: `?lang=` in the link, then the visitor's saved
// choice, then the browser's languages, then English. Pure: no i18next, no DOM.

export const LOCALES = ['en', 'zh-CN'] as const;
export type Locale = (typeof LOCALES)[number];
export const DEFAULT_LOCALE: Locale = 'en';

/** The query parameter that picks the language (kept in shared links). */
export const LANG_PARAM = 'lang';

/** Each language named in itself, for the header's switch. */
export const LOCALE_NAMES: Record<Locale, string> = { en: 'English', 'zh-CN': '简体中文' };

/**
 * The locale a language tag asks for, or null. Any Chinese tag reads zh-CN, the only Chinese this
 * page has (zh, zh-Hans, zh-SG; zh-TW and zh-HK too: simplified text is closer than English).
 */
export function localeOf(tag: string | null | undefined): Locale | null {
  if (!tag) return null;
  const t = tag.trim().toLowerCase().replace('_', '-');
  if (t === 'zh' || t.startsWith('zh-')) return 'zh-CN';
  if (t === 'en' || t.startsWith('en-')) return 'en';
  return null;
}

export interface LocaleSources {
  /** `?lang=` as the link has it, or null when absent. */
  query: string | null;
  /** The visitor's saved choice from an earlier visit, or null. */
  saved: string | null;
  /** navigator.languages (most preferred first). */
  browser: readonly string[];
}

export interface ChosenLocale {
  locale: Locale;
  /** Where it came from: a link or the switch (kept in links the page writes), or the browser. */
  from: 'query' | 'saved' | 'browser' | 'default';
  /** The `?lang=` value could not be read: the page says so and falls back. */
  badQuery: string | null;
}

export function chooseLocale({ query, saved, browser }: LocaleSources): ChosenLocale {
  const fromQuery = localeOf(query);
  if (fromQuery) return { locale: fromQuery, from: 'query', badQuery: null };
  const badQuery = query !== null && query !== '' ? query : null;
  const fromSaved = localeOf(saved);
  if (fromSaved) return { locale: fromSaved, from: 'saved', badQuery };
  for (const tag of browser) {
    const l = localeOf(tag);
    if (l) return { locale: l, from: 'browser', badQuery };
  }
  return { locale: DEFAULT_LOCALE, from: 'default', badQuery };
}
