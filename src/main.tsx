// Page entry: mounts the React app. The main thread only draws; all GPU work runs in workers.
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './ui/App.tsx';
import './ui/styles.css';
import './ui/a11y/a11y.css';

// The offline service worker and its update notice: built pages only (the dev server has none).
if (import.meta.env.PROD) void import('./pwa.ts');

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
