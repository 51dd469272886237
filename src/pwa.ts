/// <reference types="vite-plugin-pwa/vanillajs" />
// Registers the service worker that keeps the page working offline (vite.config.ts, offline()).
// Builds only: main.tsx imports this module when import.meta.env.PROD.
import { registerSW } from 'virtual:pwa-register';
import { useAppUpdate } from './store/appUpdate.ts';

if ('serviceWorker' in navigator) {
  const update = registerSW({
    onNeedRefresh: () => useAppUpdate.getState().setReload(() => update(true)),
    onOfflineReady: () => useAppUpdate.getState().setOfflineReady(),
  });
}
