/// <reference types="vite-plugin-pwa/vanillajs" />
// Registers the service worker that keeps the page working offline (vite.config.ts, offline()).
// Builds only: main.tsx imports this module when import.meta.env.PROD.
import { registerSW } from 'virtual:pwa-register';
import { useAppUpdate } from './store/appUpdate.ts';
import { afterStartup } from './store/startup.ts';

if ('serviceWorker' in navigator) {
  let reloading = false;
  /** One reload for one new version: the page's listener and registerSW's may both see it take over. */
  const reloadOnce = () => {
    if (reloading) return;
    reloading = true;
    window.location.reload();
  };

  // Registered once start-up is over: a first visit's precache then does not compete with the
  // kernels' compilation for the first chart point.
  let update: ((reloadPage?: boolean) => Promise<void>) | null = null;
  afterStartup(() => {
    update = registerSW({
      onNeedRefresh: () => useAppUpdate.getState().setReload(reloadIntoNewVersion),
      onNeedReload: reloadOnce,
      onOfflineReady: () => useAppUpdate.getState().setOfflineReady(),
    });
  });

  /**
   * The user pressed Reload: the waiting worker takes over, then the page reloads. registerSW
   * reloads only when the page had a controller at registration; the page's own listener covers
   * the rest, and reloadOnce keeps the two from starting a second navigation over the first.
   */
  async function reloadIntoNewVersion(): Promise<void> {
    navigator.serviceWorker.addEventListener('controllerchange', reloadOnce, { once: true });
    await update?.(true);
  }
}
