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

export function setPresenter(next: boolean): void {
  if (next === on) return;
  on = next;
  try {
    sessionStorage.setItem(KEY, on ? '1' : '0');
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
