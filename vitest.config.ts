import { defineConfig } from 'vitest/config';

// Three projects: `unit` is pure TypeScript (CPU reference math, config, tokenizer);
// `integration` runs the model, reward model and trainer on the float64 CPU backend (no WebGPU);
// `gpu` runs the real WGSL on Dawn (the `webgpu` package) and fails when no adapter is found.
// One TEST_SEED for the whole run: worker processes inherit it, so the seed a run prints is the seed
// every test file used, and `TEST_SEED=<n> npm test` reproduces a failure from any file.
process.env.TEST_SEED ??= String((Date.now() ^ (Math.random() * 2 ** 31)) >>> 0);

export default defineConfig({
  test: {
    projects: [
      {
        test: { name: 'unit', include: ['tests/unit/**/*.test.ts'], environment: 'node' },
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
