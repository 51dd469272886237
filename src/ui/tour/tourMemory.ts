// Whether this browser has seen the tour. Kept in localStorage; where storage throws (private
// mode, disabled cookies, a sandboxed frame) it is kept for this page's lifetime instead, so a
// dismissed invitation never comes back before a reload.
export const TOUR_STORAGE_KEY = 'ppo-playground-tour';

/** The part of `Storage` used here, so tests can hand in a throwing one. */
export type TourStorage = Pick<Storage, 'getItem' | 'setItem'>;

let doneThisPage = false;

function browserStorage(): TourStorage | null {
  try {
    return typeof window === 'undefined' ? null : window.localStorage;
  } catch {
    return null;
  }
}

/** True once the tour was finished or dismissed in this browser (or on this page, without storage). */
export function tourSeen(storage: TourStorage | null = browserStorage()): boolean {
  if (doneThisPage) return true;
  try {
    return storage?.getItem(TOUR_STORAGE_KEY) === 'done';
  } catch {
    return false;
  }
}

/** Remembers that the tour was finished or dismissed. */
export function markTourSeen(storage: TourStorage | null = browserStorage()): void {
  doneThisPage = true;
  try {
    storage?.setItem(TOUR_STORAGE_KEY, 'done');
  } catch {
    // Storage full or forbidden: remembered for this page only.
  }
}

/** For tests: forget the in-page memory. */
export function resetTourMemoryForTests(): void {
  doneThisPage = false;
}

/**
 * Whether a first visit gets the invitation. Not when the tour was seen, and not in a browser
 * driven by automation (`navigator.webdriver`): an end-to-end test that did not ask for the tour
 * must find the page exactly as it was; a test that wants it clicks the Tour button.
 */
export function shouldInvite(seen: boolean, automated: boolean): boolean {
  return !seen && !automated;
}
