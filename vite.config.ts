import { defineConfig, type Plugin } from 'vite';
import react from '@vitejs/plugin-react';
import { VitePWA } from 'vite-plugin-pwa';

/** The dev server's React refresh preamble is an inline script: its page runs without the CSP tag. */
function noCspInDev(): Plugin {
  return {
    name: 'no-csp-in-dev',
    apply: 'serve',
    transformIndexHtml: (html) => html.replace(/<meta\s+http-equiv="Content-Security-Policy"[^>]*>/, ''),
  };
}

/** Budget for every chunk the page needs before its first paint (minified, before compression). */
const FIRST_LOAD_CHUNK_BUDGET = 250_000;

/**
 * Prints what the first paint loads (the entry chunk and every chunk it imports statically, through
 * any depth) and fails the build when one of those chunks is over budget. Charts, teaching views
 * and the job export are dynamic imports (src/ui/Playground.tsx) and load right after.
 */
function firstLoadBudget(): Plugin {
  return {
    name: 'first-load-budget',
    apply: 'build',
    generateBundle(_options, bundle) {
      const chunks = Object.values(bundle).filter((c) => c.type === 'chunk');
      const entry = chunks.find((c) => c.isEntry && c.facadeModuleId?.endsWith('index.html'));
      if (!entry) return;
      const byName = new Map(chunks.map((c) => [c.fileName, c]));
      const first: typeof chunks = [];
      const add = (c: (typeof chunks)[number] | undefined) => {
        if (!c || first.includes(c)) return;
        first.push(c);
        for (const f of c.imports) add(byName.get(f));
      };
      add(entry);
      const kb = (n: number) => `${(n / 1000).toFixed(1)} kB`;
      const size = (c: (typeof chunks)[number]) => Buffer.byteLength(c.code);
      const total = first.reduce((s, c) => s + size(c), 0);
      this.info(`first load: ${first.map((c) => `${c.fileName} ${kb(size(c))}`).join(' + ')} = ${kb(total)} of JavaScript before the first paint`);
      const lazy = chunks.filter((c) => !first.includes(c) && !c.fileName.includes('worker'));
      this.info(`on demand: ${lazy.map((c) => `${c.fileName} ${kb(size(c))}`).join(', ')}`);
      for (const c of first) {
        if (size(c) > FIRST_LOAD_CHUNK_BUDGET) this.error(`${c.fileName} is ${kb(size(c))}, over the first-load budget of ${kb(FIRST_LOAD_CHUNK_BUDGET)}`);
      }
    },
  };
}

/**
 * Works offline after one visit: a Workbox service worker (generateSW) precaches every file of the
 * build — HTML, JS (the shaders are bundled into it), CSS, fonts, the QuickJS wasm, the icons and
 * the checkpoints in public/checkpoints (~430 kB each, hence the raised size limit). 'prompt': a new
 * build waits until the user presses Reload in the page's update notice (src/ui/UpdatePrompt.tsx),
 * so a deploy never interrupts a training run. The dev server registers no worker.
 */
function offline(): Plugin[] {
  return VitePWA({
    registerType: 'prompt',
    injectRegister: false, // src/pwa.ts registers it (virtual:pwa-register), in builds only
    includeAssets: ['favicon.svg'],
    manifest: {
      name: 'PPO Playground',
      short_name: 'PPO Playground',
      description: 'Train a small transformer with PPO (RLHF-style) in your browser on WebGPU, and watch it learn.',
      theme_color: '#4f46e5',
      background_color: '#ffffff',
      display: 'standalone',
      start_url: './',
      scope: './',
      icons: [
        { src: 'favicon.svg', sizes: 'any', type: 'image/svg+xml' },
        { src: 'icon-192.png', sizes: '192x192', type: 'image/png' },
        { src: 'icon-512.png', sizes: '512x512', type: 'image/png' },
        { src: 'icon-maskable-512.png', sizes: '512x512', type: 'image/png', purpose: 'maskable' },
      ],
    },
    workbox: {
      globPatterns: ['**/*.{html,js,css,svg,png,woff,woff2,ttf,wasm,safetensors,json,webmanifest}'],
      maximumFileSizeToCacheInBytes: 16 * 1024 * 1024,
      // The page's URL carries its settings (?promptsPerBatch=…): every navigation gets index.html.
      navigateFallback: 'index.html',
      cleanupOutdatedCaches: true,
    },
    devOptions: { enabled: false },
  });
}

// The page is fully static: everything it needs (shaders, checkpoints) ships in dist/.
export default defineConfig({
  plugins: [react(), firstLoadBudget(), noCspInDev(), offline()],
  base: './',
  worker: { format: 'es' },
  build: {
    target: 'es2022',
    sourcemap: true,
    // Fonts (KaTeX's) stay files: a font inlined as a data: URL is refused by the CSP's font-src 'self'.
    assetsInlineLimit: (file: string) => (/\.(woff2?|ttf|otf)$/.test(file) ? false : undefined),
    rolldownOptions: {
      output: {
        // React (react-dom is ~210 kB by itself) in a chunk of its own, cached across releases of the app code.
        codeSplitting: { groups: [{ name: 'react', test: /[\\/]node_modules[\\/](react|react-dom|scheduler)[\\/]/ }] },
      },
    },
  },
  server: { port: 5173 },
  preview: { port: 4173 },
});
