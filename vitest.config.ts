import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

// Four projects: `unit` is pure TypeScript in one process (CPU reference math, config, tokenizer);
// `cli` runs the command-line tools as processes (tsx, npm, python3, bash) and the short fuzz
// campaign; `integration` runs the model, reward model and trainer on the float64 CPU backend (no
// WebGPU); `gpu` runs the real WGSL on Dawn (the `webgpu` package) and fails when no adapter is
// found (a test that needs WebGPU is in `gpu` even when it starts a process).
// One TEST_SEED for the whole run: worker processes inherit it, so the seed a run prints is the seed
// every test file used, and `TEST_SEED=<n> npm test` reproduces a failure from any file.
process.env.TEST_SEED ??= String((Date.now() ^ (Math.random() * 2 ** 31)) >>> 0);

/**
 * The slowest files of each project, slowest first (npm test's "Slowest test files" of a clean-clone
 * run, 2026-11-29, in seconds). On a clean checkout Vitest has no timings of its own and starts the
 * largest files first: a long file that starts late runs alone on one core at the end (28 s of
 * the gpu project's 335, 18 s of integration's 140). A file missing here just starts in Vitest's order.
 */
const SLOWEST_FIRST = [
  'tests/gpu/hf_ppo.test.ts', // 120
  'tests/integration/rl_sentiment.test.ts', // 106
  'tests/cli/hf_train_cli.test.ts', // 92
  'tests/cli/hf_logprobs_generate.test.ts', // 75
  'tests/gpu/rl_arithmetic.test.ts', // 62
  'tests/integration/rm_generalisation.test.ts', // 61
  'tests/integration/rl_learning.test.ts', // 33
  'tests/gpu/hf_model.test.ts', // 31
  'tests/gpu/trainer_dispatch.test.ts', // 30
  'tests/gpu/soak.test.ts', // 29
  'tests/gpu/gqa_attention.test.ts', // 28
  'tests/cli/fuzz_campaign.test.ts', // 23
  'tests/gpu/seq_decode_fused.test.ts', // 22
  'tests/gpu/rm_train.test.ts', // 19
  'tests/gpu/policy_loss.test.ts', // 19
  'tests/gpu/rl_learning_webgpu.test.ts', // 17
  'tests/gpu/sample_vocab.test.ts', // 17
];

/** Vitest's order (projects one after another), with each project's files of SLOWEST_FIRST moved to its front. */
class SlowestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (spec: TestSpecification) => {
      const i = SLOWEST_FIRST.findIndex((f) => spec.moduleId.endsWith(`/${f}`));
      return i < 0 ? SLOWEST_FIRST.length : i;
    };
    const sorted = await super.sort(files);
    const projects = [...new Set(sorted.map((spec) => spec.project.name))];
    return sorted
      .map((spec, at) => ({ spec, at, project: projects.indexOf(spec.project.name), rank: rank(spec) }))
      .sort((a, b) => a.project - b.project || a.rank - b.rank || a.at - b.at)
      .map((x) => x.spec);
  }
}

// One test file per core. Vitest's default keeps a core for its own process, which sits idle in
// `vitest run`: on CI's 2 cores that ran every file one after another.
const maxWorkers = availableParallelism();

export default defineConfig({
  test: {
    maxWorkers,
    sequence: { sequencer: SlowestFirst },
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
