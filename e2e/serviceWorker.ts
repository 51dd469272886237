// The built page's service worker (vite-plugin-pwa): waits until it is installed (its precache
// filled: install waits for every file) and active, and says which URLs it holds.
import type { Page } from '@playwright/test';

export function precached(page: Page): Promise<{ active: string | undefined; urls: string[] }> {
  return page.evaluate(async () => {
    const reg = await navigator.serviceWorker.ready;
    // ready resolves once a worker is active, which may still be 'activating': wait for the end
    const sw = reg.active;
    if (sw && sw.state !== 'activated') await new Promise<void>((done) => sw.addEventListener('statechange', () => sw.state === 'activated' && done()));
    const names = await caches.keys();
    const urls = await Promise.all(names.map(async (c) => (await (await caches.open(c)).keys()).map((r) => r.url)));
    return { active: reg.active?.state, urls: urls.flat() };
  });
}
