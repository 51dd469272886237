// A new build of the page is ready (the service worker has precached it and waits): the page's
// update notice shows, and its Reload button activates the new worker and reloads. Nothing reloads
// on its own, so a training run is never interrupted by a deploy.
import { create } from 'zustand';
import { t } from '../i18n/index.ts';

interface AppUpdate {
  /** Set when a new version waits; calling it activates that version and reloads the page. */
  reload: (() => Promise<void>) | null;
  /** The page now works without a network (everything it needs is cached). */
  offlineReady: boolean;
  dismissed: boolean;
  setReload(reload: () => Promise<void>): void;
  setOfflineReady(): void;
  dismiss(): void;
}

export const useAppUpdate = create<AppUpdate>((set) => ({
  reload: null,
  offlineReady: false,
  dismissed: false,
  setReload: (reload) => set({ reload, dismissed: false }),
  setOfflineReady: () => set({ offlineReady: true }),
  dismiss: () => set({ dismissed: true }),
}));

export function updateReady(): string {
  return t('notices:update.ready');
}

/** What the Reload button costs: a training run in progress stops (its last saved state can resume). */
export function updateAdvice(training: boolean): string {
  return training ? t('notices:update.whileTraining') : t('notices:update.idle');
}
