// The page's translations: one i18next instance, English bundled for the first paint, everything
// else (Chinese, and the namespaces of the lazily loaded views) fetched when first needed.
// Strings live in src/i18n/locales/<locale>/<namespace>.json; terms follow glossary.zh-CN.json.
import i18next, { type TFunction } from 'i18next';
import resourcesToBackend from 'i18next-resources-to-backend';
import { initReactI18next } from 'react-i18next';
import common from './locales/en/common.json' with { type: 'json' };
import gpu from './locales/en/gpu.json' with { type: 'json' };
import notices from './locales/en/notices.json' with { type: 'json' };
import presets from './locales/en/presets.json' with { type: 'json' };
import settings from './locales/en/settings.json' with { type: 'json' };
import { DEFAULT_LOCALE, type Locale, LOCALES } from './locales.ts';

/** Every namespace, one JSON file per locale each. */
export const NAMESPACES = ['common', 'settings', 'presets', 'notices', 'gpu', 'charts', 'inspect', 'teach', 'tour', 'exportJob'] as const;
export type Namespace = (typeof NAMESPACES)[number];
/** What the first paint shows: bundled in English, fetched before the first render in Chinese. */
export const FIRST_PAINT_NAMESPACES: readonly Namespace[] = ['common', 'settings', 'presets', 'notices', 'gpu'];

type LocaleFile = () => Promise<{ default: Record<string, unknown> }>;
/**
 * Vite turns the glob into one lazily loaded chunk per file. Under Node without Vite (tsx: the
 * command-line tools, Playwright's loader) there is no glob: those get the bundled English only.
 */
function localeFiles(): Record<string, LocaleFile> {
  try {
    return import.meta.glob<{ default: Record<string, unknown> }>('./locales/*/*.json');
  } catch {
    return {};
  }
}
const lazyFiles = localeFiles();

export const i18n = i18next.createInstance();
void i18n
  .use(initReactI18next)
  .use(
    resourcesToBackend((lng: string, ns: string) => {
      const load = lazyFiles[`./locales/${lng}/${ns}.json`];
      if (!load) return Promise.reject(new Error(`no translations for ${lng}/${ns}`));
      return load().then((m) => m.default);
    }),
  )
  .init({
    lng: DEFAULT_LOCALE,
    fallbackLng: DEFAULT_LOCALE,
    supportedLngs: [...LOCALES],
    ns: [...FIRST_PAINT_NAMESPACES],
    defaultNS: 'common',
    resources: { en: { common, settings, presets, notices, gpu } },
    partialBundledLanguages: true,
    initAsync: false,
    // React escapes what it renders; the few strings set as text elsewhere are plain text too.
    interpolation: { escapeValue: false },
    returnEmptyString: false,
    react: { useSuspense: true },
    showSupportNotice: false,
  });

/** The translation function of the current language (outside React: notices, chart help, summaries). */
export const t: TFunction = i18n.t.bind(i18n) as TFunction;

export function currentLocale(): Locale {
  return (LOCALES as readonly string[]).includes(i18n.language) ? (i18n.language as Locale) : DEFAULT_LOCALE;
}

/** Loads namespaces of the current language (and English, the fallback) before a view needs them. */
export async function loadNamespaces(ns: readonly Namespace[]): Promise<void> {
  await i18n.loadNamespaces([...ns]);
}

/** Switches the page's language: its namespaces load first, then every view re-renders in it. */
export async function switchLocale(locale: Locale): Promise<void> {
  const loaded = NAMESPACES.filter((ns) => i18n.hasLoadedNamespace(ns));
  await i18n.loadLanguages([locale]);
  await i18n.changeLanguage(locale);
  await i18n.loadNamespaces([...new Set([...FIRST_PAINT_NAMESPACES, ...loaded])]);
  if (typeof document !== 'undefined') {
    document.documentElement.lang = locale;
    document.title = i18n.t('common:app.title');
  }
}

// ---- Numbers and dates, in the locale's own conventions (Intl) ----

const numberFormats = new Map<string, Intl.NumberFormat>();

/** A number as the current locale writes it (grouping, decimal sign); options as Intl.NumberFormat's. */
export function formatNumber(x: number, options: Intl.NumberFormatOptions = {}): string {
  const key = `${currentLocale()}|${JSON.stringify(options)}`;
  let f = numberFormats.get(key);
  if (!f) {
    f = new Intl.NumberFormat(currentLocale(), options);
    numberFormats.set(key, f);
  }
  return f.format(x);
}

/** A date and time as the current locale writes it. */
export function formatDateTime(d: Date | number, options: Intl.DateTimeFormatOptions = { dateStyle: 'medium', timeStyle: 'short' }): string {
  return new Intl.DateTimeFormat(currentLocale(), options).format(d);
}
