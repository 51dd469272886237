import { defineConfig, type Plugin } from 'vite';
import react from '@vitejs/plugin-react';

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
 * Prints what the first paint loads (the entry chunk and its static imports) and fails the build
 * when one of those chunks is over budget. Charts, teaching views and the job export are dynamic
 * imports (src/ui/Playground.tsx) and load right after.
 */
function firstLoadBudget(): Plugin {
  return {
    name: 'first-load-budget',
    apply: 'build',
    generateBundle(_options, bundle) {
      const chunks = Object.values(bundle).filter((c) => c.type === 'chunk');
      const entry = chunks.find((c) => c.isEntry && c.facadeModuleId?.endsWith('index.html'));
      if (!entry) return;
      const first = [entry, ...entry.imports.map((f) => chunks.find((c) => c.fileName === f)!).filter(Boolean)];
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

// The page is fully static: everything it needs (shaders, checkpoints) ships in dist/.
export default defineConfig({
  plugins: [react(), firstLoadBudget(), noCspInDev()],
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
