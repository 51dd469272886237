// Presenter mode for a lecture on a projector: large type, four charts, thick high-contrast lines.
// The switch is remembered for the browser tab (sessionStorage) and mirrored into the link
// (`?present=1`, useUrlSync), and shown as a class on <html> so the stylesheet scales everything.
import { useSyncExternalStore } from 'react';
import './presenter.css';

const KEY = 'ppo-playground.present';
const CLASS = 'present';

function readStored(): boolean {
  try {
    return typeof sessionStorage !== 'undefined' && sessionStorage.getItem(KEY) === '1';
  } catch {
    return false;
  }
}

let on = readStored();
const listeners = new Set<() => void>();

function apply(): void {
  if (typeof document !== 'undefined') document.documentElement.classList.toggle(CLASS, on);
}
apply();

/** Turns presenter mode on or off; `remember`: for the rest of the tab's visit (an embedded view's is not). */
export function setPresenter(next: boolean, remember = true): void {
  if (next === on) return;
  on = next;
  try {
    if (remember) sessionStorage.setItem(KEY, on ? '1' : '0');
  } catch {
    // Storage blocked (private mode, a sandboxed frame): the mode still works for this page.
  }
  apply();
  for (const l of listeners) l();
}

export function isPresenter(): boolean {
  return on;
}

function subscribe(l: () => void): () => void {
  listeners.add(l);
  return () => listeners.delete(l);
}

export function usePresenter(): boolean {
  return useSyncExternalStore(subscribe, isPresenter, () => false);
}
