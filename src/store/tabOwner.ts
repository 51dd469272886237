// One tab owns the saved runs. Every tab of the page shares one IndexedDB database, and each tab
// writes its whole run list (persist.ts clears and rewrites the set) and the one resume state: a
// second tab writing its own, older copy would silently undo the first tab's runs and replace its
// resume point. So a tab holds a Web Lock (LOCK) while it may write; a tab that finds it held is
// read-only (no run, state, batch or "Run both" writes, and no training) and waits in the lock's
// queue: when the owner closes, it takes over by itself, first reading the runs back from the
// database. "Take over" steals the lock; the tab it was stolen from pauses and becomes read-only.
// Without the Web Locks API (old browsers) every tab writes, as before.
import { create } from 'zustand';
import { useApp } from './appStore.ts';

export const LOCK = 'ppo-playground-runs';

/** 'unclaimed': no claim made (tests, node); it writes, as the page did before ownership existed. */
export type TabRole = 'unclaimed' | 'owner' | 'readonly';
export type TabEvent = 'granted' | 'busy' | 'stolen' | 'unsupported';

export interface Transition {
  role: TabRole;
  /** Read the runs and resume point back from the database: another tab may have changed them. */
  reload: boolean;
  /** Stop training now: the runs belong to another tab. */
  pause: boolean;
  /** Queue for the lock, to own the runs when the tab that holds them closes. */
  wait: boolean;
}

/** What a lock event makes of a tab: the pure part of the ownership rules (unit-tested). */
export function nextRole(role: TabRole, event: TabEvent): Transition {
  switch (event) {
    case 'unsupported':
      return { role: 'owner', reload: false, pause: false, wait: false };
    case 'granted':
      return { role: 'owner', reload: role === 'readonly', pause: false, wait: false };
    case 'busy':
      return { role: 'readonly', reload: false, pause: false, wait: true };
    case 'stolen':
      return { role: 'readonly', reload: false, pause: role === 'owner', wait: true };
  }
}

export function mayWrite(role: TabRole): boolean {
  return role !== 'readonly';
}

let role: TabRole = 'unclaimed';
let release: (() => void) | null = null;
let waiting: AbortController | null = null;
let onReload: (() => Promise<void>) | null = null;
let onPause: (() => void) | null = null;

/** Whether this tab may write runs, resume state, batches and "Run both" now. */
export function ownsRuns(): boolean {
  return mayWrite(role);
}

function apply(event: TabEvent): void {
  const t = nextRole(role, event);
  role = t.role;
  useApp.getState().setReadOnlyTab(role === 'readonly');
  if (t.pause) onPause?.();
  if (t.reload) void onReload?.();
  if (t.wait) queue();
}

/** Holds the lock until released (another tab steals it, or this tab closes). */
function held(): Promise<void> {
  apply('granted');
  return new Promise<void>((resolve) => {
    release = resolve;
  });
}

function lost(e: unknown): void {
  release = null;
  // A steal rejects the holder's request with an AbortError; any other failure leaves the tab as is.
  if (e instanceof DOMException && e.name === 'AbortError' && role === 'owner') apply('stolen');
}

function queue(): void {
  if (waiting) return;
  const ctl = new AbortController();
  waiting = ctl;
  navigator.locks
    .request(LOCK, { signal: ctl.signal }, () => {
      waiting = null;
      return held();
    })
    .catch((e: unknown) => {
      if (ctl.signal.aborted) return; // taken over instead
      waiting = null;
      lost(e);
    });
}

/**
 * Claims the runs for this tab. Resolves once the answer is known (the lock is granted or held
 * elsewhere), before anything is written. `reload` reads the database back when ownership comes
 * later; `pause` stops training when another tab takes over.
 */
export function claimRuns(hooks: { reload: () => Promise<void>; pause: () => void }): Promise<void> {
  onReload = hooks.reload;
  onPause = hooks.pause;
  if (typeof navigator === 'undefined' || !navigator.locks) {
    apply('unsupported');
    return Promise.resolve();
  }
  return new Promise<void>((answered) => {
    navigator.locks
      .request(LOCK, { ifAvailable: true }, (lock) => {
        if (!lock) {
          apply('busy');
          answered();
          return;
        }
        const hold = held();
        answered();
        return hold;
      })
      .catch((e: unknown) => {
        answered();
        lost(e);
      });
  });
}

/** "Take over": this tab owns the runs from now on; the tab that held them becomes read-only. */
export function takeOver(): void {
  if (typeof navigator === 'undefined' || !navigator.locks || role !== 'readonly') return;
  waiting?.abort();
  waiting = null;
  navigator.locks.request(LOCK, { steal: true }, () => held()).catch(lost);
}

/** For tests: forget the claim. */
export function resetTabOwner(): void {
  release?.();
  release = null;
  waiting?.abort();
  waiting = null;
  role = 'unclaimed';
}

// ───────────── persistent storage (asked for once, by the tab that owns the runs) ─────────────

interface StorageAnswer {
  /** null: not asked yet, or the browser has no StorageManager.persist. */
  persisted: boolean | null;
}

export const useStorageAnswer = create<StorageAnswer>(() => ({ persisted: null }));

let asked = false;

/** Asks the browser to keep this page's storage when space runs low; the answer is shown in the footer. */
export async function requestPersistence(): Promise<void> {
  if (asked || typeof navigator === 'undefined' || !navigator.storage?.persist) return;
  asked = true;
  try {
    const persisted = (await navigator.storage.persisted?.()) || (await navigator.storage.persist());
    useStorageAnswer.setState({ persisted });
  } catch {
    useStorageAnswer.setState({ persisted: false });
  }
}
