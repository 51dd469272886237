// Page entry: picks the language, then mounts the React app. The main thread only draws; all GPU
// work runs in workers.
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { startLocale } from './i18n/choice.ts';
import { runSelftest } from './store/selftest.ts';
import { trainer } from './store/trainerClient.ts';
import { embedsRecordedRun } from './store/viewLink.ts';
import { App } from './ui/App.tsx';
import './ui/styles.css';
import './ui/a11y/a11y.css';

// The offline service worker and its update notice: built pages only (the dev server has none).
if (import.meta.env.PROD) void import('./pwa.ts');

// Chinese is fetched before the first render so the page never flashes English first; a failed
// fetch (offline before the first visit cached it) leaves the page in English rather than blank.
// The WebGPU self-test starts before the first render, not after it: its worker loads and the
// browser's GPU process starts up while React renders the page (its messages are worded in the
// language just loaded). The trainer worker's script loads then too; it starts its device only
// once the self-test has passed (App's warm-up), so the two do not compete for the GPU process.
void startLocale()
  .catch((e: unknown) => console.error('translations did not load', e))
  .finally(() => {
    runSelftest();
    if ('gpu' in navigator && !embedsRecordedRun(window.location.search)) trainer.preload();
    createRoot(document.getElementById('root')!).render(
      <StrictMode>
        <App />
      </StrictMode>,
    );
  });
