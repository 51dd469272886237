// The page's language at startup and when the visitor switches: read from the link, the saved
// choice or the browser (locales.ts decides), remembered in localStorage, written on <html lang>.
import { currentLocale, switchLocale } from './index.ts';
import { chooseLocale, type ChosenLocale, LANG_PARAM, type Locale, localeOf } from './locales.ts';

const SAVED_KEY = 'ppo-lang';

function storage(): Storage | null {
  try {
    return typeof window === 'undefined' ? null : window.localStorage;
  } catch {
    return null; // storage blocked (private mode, sandboxed frame): the choice lasts the visit
  }
}

let explicit = false;
let badQuery: string | null = null;

/** Picks and loads the language before the first render. */
export async function startLocale(): Promise<ChosenLocale> {
  const chosen = chooseLocale({
    query: new URLSearchParams(window.location.search).get(LANG_PARAM),
    saved: storage()?.getItem(SAVED_KEY) ?? null,
    browser: navigator.languages?.length ? navigator.languages : [navigator.language],
  });
  explicit = chosen.from === 'query' || chosen.from === 'saved';
  badQuery = chosen.badQuery;
  await switchLocale(chosen.locale);
  return chosen;
}

/** The header's switch: the page re-renders in `locale`, and this browser remembers it. */
export async function chooseLocaleNow(locale: Locale): Promise<void> {
  explicit = true;
  try {
    storage()?.setItem(SAVED_KEY, locale);
  } catch {
    // a full or blocked storage keeps the choice for this visit only
  }
  await switchLocale(locale);
}

/** The `?lang=` the page writes into its own address (and so into every shared link), or null. */
export function linkLocale(current: string): Locale | null {
  const l = localeOf(current) ?? currentLocale();
  return explicit || l !== 'en' ? l : null;
}

/** A `?lang=` value the page could not read (reported beside the link's other problems). */
export function unreadLangParam(): string | null {
  return badQuery;
}
