import { defineConfig } from '@playwright/test';
// The real page in Debian's Chromium with WebGPU on SwiftShader (path and flags shared with the page bench).
import { CHROMIUM_ARGS, CHROMIUM_PATH } from './src/node/chromium.ts';

// Several checkouts on one machine each serve on their own port (PPO_E2E_PORT).
const port = Number(process.env.PPO_E2E_PORT ?? 4173);

export default defineConfig({
  testDir: 'e2e',
  testMatch: '**/*.spec.ts',
  // The page soak runs for minutes: only when asked (PPO_SOAK_MINUTES=10 npx playwright test e2e/soak.spec.ts).
  testIgnore: process.env.PPO_SOAK_MINUTES ? [] : ['**/soak.spec.ts'],
  // Screenshot baselines (visual.spec.ts) live beside the specs, one folder per spec file.
  snapshotPathTemplate: '{testDir}/__screenshots__/{testFilePath}/{arg}{ext}',
  // One worker: the machine has few cores and SwiftShader uses them all.
  workers: 1,
  fullyParallel: false,
  timeout: 60_000,
  expect: { timeout: 20_000 },
  retries: 0,
  reporter: [['list'], ['json', { outputFile: '.reports/playwright.json' }]],
  use: {
    baseURL: `http://localhost:${port}`,
    headless: true,
    viewport: { width: 1360, height: 900 },
    launchOptions: { executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS },
    trace: 'off',
    // The page's offline worker precaches every asset on each fresh context: about 2 s of CPU a
    // test (scripts/page-load-cost.ts --service-worker). Only the specs that test it allow it.
    serviceWorkers: 'block',
  },
  // Serves the built dist/ (`npm run test:e2e` runs `vite build` first).
  webServer: {
    command: `npx vite preview --port ${port} --strictPort`,
    url: `http://localhost:${port}`,
    reuseExistingServer: false,
    timeout: 60_000,
  },
});
