import { defineConfig } from 'vitest/config';

// Two projects: `unit` is pure TypeScript (CPU reference math, config, tokenizer);
// `gpu` runs the real WGSL on Dawn (the `webgpu` package) and fails when no adapter is found.
export default defineConfig({
  test: {
    projects: [
      {
        test: { name: 'unit', include: ['tests/unit/**/*.test.ts'], environment: 'node' },
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
