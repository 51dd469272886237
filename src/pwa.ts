/// <reference types="vite-plugin-pwa/vanillajs" />
// Registers the service worker that keeps the page working offline (vite.config.ts, offline()).
// Builds only: main.tsx imports this module when import.meta.env.PROD.
import { registerSW } from 'virtual:pwa-register';
import { useAppUpdate } from './store/appUpdate.ts';

if ('serviceWorker' in navigator) {
  const update = registerSW({
    onNeedRefresh: () => useAppUpdate.getState().setReload(reloadIntoNewVersion),
    onOfflineReady: () => useAppUpdate.getState().setOfflineReady(),
  });

  /**
   * The user pressed Reload: the waiting worker takes over, then the page reloads. registerSW
   * reloads by itself only for a version found during this page's life; one that was already
   * waiting when the page loaded (found before, and "Later" pressed) takes over without a reload,
   * so the page reloads itself when its controller changes.
   */
  async function reloadIntoNewVersion(): Promise<void> {
    navigator.serviceWorker.addEventListener('controllerchange', () => window.location.reload(), { once: true });
    await update(true);
  }
}
