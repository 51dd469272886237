import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

// Four projects: `unit` is pure TypeScript in one process (CPU reference math, config, tokenizer);
// `cli` runs the command-line tools as processes (tsx, npm, python3, bash) and the short fuzz
// campaign; `integration` runs the model, reward model and trainer on the float64 CPU backend (no
// WebGPU); `gpu` runs the real WGSL on Dawn (the `webgpu` package) and fails when no adapter is
// found (a test that needs WebGPU is in `gpu` even when it starts a process).
// One TEST_SEED for the whole run: worker processes inherit it, so the seed a run prints is the seed
// every test file used, and `TEST_SEED=<n> npm test` reproduces a failure from any file.
process.env.TEST_SEED ??= String((Date.now() ^ (Math.random() * 2 ** 31)) >>> 0);

// One test file per core. Vitest's default keeps a core for its own process, which sits idle in
// `vitest run`: on CI's 2 cores that ran every file one after another.
const maxWorkers = availableParallelism();

export default defineConfig({
  test: {
    maxWorkers,
    projects: [
      {
        // 30 s, not Vitest's 5 s: the scans of every source file (i18n, imports) took over 5 s on
        // a 2-core machine shared with other work; a test that hangs still fails.
        test: { name: 'unit', include: ['tests/unit/**/*.test.ts'], environment: 'node', testTimeout: 30_000 },
      },
      {
        test: {
          name: 'cli',
          include: ['tests/cli/**/*.test.ts'],
          environment: 'node',
          pool: 'forks',
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
      {
        test: {
          name: 'integration',
          include: ['tests/integration/**/*.test.ts'],
          environment: 'node',
          pool: 'forks',
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
      {
        test: {
          name: 'gpu',
          include: ['tests/gpu/**/*.test.ts'],
          environment: 'node',
          setupFiles: ['tests/gpu/setup.ts'],
          pool: 'forks',
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
