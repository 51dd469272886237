// Runs gpu test files under Deno, on Deno's WebGPU (wgpu and its Naga shader compiler, the
// implementation inside Firefox), with the `vitest` import mapped to tests/wgpu/vitest_shim.ts.
// Started by scripts/wgpu-tests.mjs, which picks the Vulkan driver (Mesa's lavapipe):
//   deno run -A --config tests/wgpu/deno.json tests/wgpu/run.ts [--json out.json] [test files...]
// (with the VK_ICD_FILENAMES and DENO_WEBGPU_BACKEND the launcher sets). Without files it runs
// wgpuFiles(): every tests/gpu file but those in LEFT_OUT, and the two tests of tests/wgpu. Suites of the float64 CPU backend ("… on cpu") are left out:
// they do not touch WebGPU and the gpu project runs them. After the tests it checks that every
// kernel the backend declares was dispatched at least once (a test of its own, "kernel coverage").
// Prints one line per test, the adapter's name, and a last line "wgpu: N passed, N failed".
import { existsSync, readdirSync } from 'node:fs';
import { specKey } from '../../src/gpu/pipelines.ts';
import { declaredKernels } from '../../src/ops/registry.ts';
import { webgpuBackend } from '../helpers/backends.ts';
import { startDawnRun } from './crossRun.ts';
import { newSuite, type Suite, setRootSuite } from './vitest_shim.ts';

/**
 * The gpu test files that do not run here, and why; every other tests/gpu file does, so a new
 * kernel test runs on both engines without being listed.
 */
export const LEFT_OUT: Record<string, string> = {
  'kernel_cli.test.ts': 'runs the kernel CLI in a Node child process, i.e. on Dawn',
  'rl_arithmetic.test.ts': 'a learning curve (minutes on a CPU device); cross_engine trains the same recipe on both engines instead',
  'rl_learning_webgpu.test.ts': 'a learning curve (minutes on a CPU device)',
  'soak.test.ts': 'memory growth over many iterations: a property of the page, not of the compiler',
  'rm_train.test.ts': 'reward-model training curve; its kernels run in rm_bradley_terry and rm_score',
  'trainer_dispatch.test.ts': 'dispatch and readback counts: the same on every engine (cross_engine compares them)',
  'rl_state.test.ts': "saving and resuming the trainer's state: file plumbing, its kernels run in the trainer tests",
  'sft_run_backends.test.ts': 'SFT learning curve; its kernels run in model_sft',
  'worker_nan.test.ts': "the worker's NaN guard: worker plumbing, no kernel of its own",
  'worker_recovery.test.ts': "the worker's device-loss recovery: worker plumbing, no kernel of its own",
};

export function wgpuFiles(): string[] {
  const gpu = readdirSync('tests/gpu')
    .filter((f) => f.endsWith('.test.ts') && !(f in LEFT_OUT))
    .sort()
    .map((f) => `tests/gpu/${f}`);
  return ['tests/wgpu/kernel_compile.test.ts', ...gpu, 'tests/wgpu/cross_engine.test.ts'];
}

/** Deno's global (this file runs only under Deno; tsc checks it with Node's types). */
declare const Deno: { version: { deno: string }; exit(code: number): never };

/** A top-level suite of the float64 CPU backend: `describe.each(BACKENDS)` names them "… on cpu". */
const CPU_SUITE = / on cpu\b/;

interface Result {
  file: string;
  name: string;
  status: 'passed' | 'failed' | 'skipped';
  ms: number;
  error?: string;
}

const args = process.argv.slice(2);
let jsonOut: string | null = null;
const files: string[] = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--json') jsonOut = args[++i];
  else files.push(args[i]);
}
if (files.length === 0) files.push(...wgpuFiles());

// Which pipelines the tests dispatch: each pipeline's label is its kernel's specKey.
const dispatched = new Set<string>();
const setPipeline = GPUComputePassEncoder.prototype.setPipeline;
GPUComputePassEncoder.prototype.setPipeline = function (this: GPUComputePassEncoder, p: GPUComputePipeline) {
  dispatched.add(p.label);
  return setPipeline.call(this, p);
};

const results: Result[] = [];
const t0 = performance.now();

function errorText(e: unknown): string {
  if (e instanceof Error) return `${e.message}${e.stack ? `\n${e.stack.split('\n').slice(1, 6).join('\n')}` : ''}`;
  return String(e);
}

async function withTimeout(fn: () => unknown, ms: number, what: string): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await Promise.race([
      Promise.resolve().then(fn),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

function countTests(s: Suite): number {
  return s.tests.length + s.suites.reduce((n, c) => n + countTests(c), 0);
}

function failAll(file: string, s: Suite, path: string[], error: string): void {
  for (const t of s.tests) record({ file, name: [...path, t.name].join(' > '), status: 'failed', ms: 0, error });
  for (const c of s.suites) failAll(file, c, [...path, c.name], error);
}

function record(r: Result): void {
  results.push(r);
  const mark = r.status === 'passed' ? '✓' : r.status === 'failed' ? '✗' : '↓';
  console.log(`  ${mark} ${r.file} > ${r.name}${r.status === 'skipped' ? '' : ` (${r.ms.toFixed(0)} ms)`}`);
  if (r.error) console.log(`      ${r.error.replace(/\n/g, '\n      ')}`);
}

async function runSuite(file: string, s: Suite, path: string[], eachHooks: Suite[]): Promise<void> {
  const live = s.skipped ? false : countTests(s) > 0;
  if (live) {
    try {
      for (const h of s.beforeAll) await withTimeout(h, 120_000, 'beforeAll');
    } catch (e) {
      failAll(file, s, path, `beforeAll failed: ${errorText(e)}`);
      return;
    }
  }
  const hooks = [...eachHooks, s];
  for (const t of s.tests) {
    const name = [...path, t.name].join(' > ');
    if (!t.fn) {
      record({ file, name, status: 'skipped', ms: 0 });
      continue;
    }
    const start = performance.now();
    try {
      for (const h of hooks) for (const f of h.beforeEach) await f();
      await withTimeout(t.fn, t.timeoutMs, 'test');
      for (const h of [...hooks].reverse()) for (const f of h.afterEach) await f();
      record({ file, name, status: 'passed', ms: performance.now() - start });
    } catch (e) {
      record({ file, name, status: 'failed', ms: performance.now() - start, error: errorText(e) });
    }
  }
  for (const c of s.suites) await runSuite(file, c, [...path, c.name], hooks);
  if (live) {
    for (const h of s.afterAll) {
      try {
        await h();
      } catch (e) {
        record({ file, name: [...path, 'afterAll'].join(' > '), status: 'failed', ms: 0, error: errorText(e) });
      }
    }
  }
}

// The device first: no adapter is a failure, never a skip (as in the gpu project's setup).
let adapter = 'none';
try {
  const be = await webgpuBackend();
  adapter = be.rt.adapterName;
  console.log(
    `wgpu adapter: ${adapter} (Deno ${Deno.version.deno}, DENO_WEBGPU_BACKEND=${process.env.DENO_WEBGPU_BACKEND ?? 'unset'}, VK_ICD_FILENAMES=${process.env.VK_ICD_FILENAMES ?? 'unset'})`,
  );
  // The launcher chose lavapipe; another adapter means the choice did not take (PPO_WGPU_VK_ICD: the caller's own).
  if (!process.env.PPO_WGPU_VK_ICD && !/llvmpipe|lavapipe/i.test(adapter)) throw new Error(`expected Mesa's lavapipe (llvmpipe), got "${adapter}"`);
} catch (e) {
  record({ file: '(setup)', name: 'acquire a WebGPU device under Deno', status: 'failed', ms: 0, error: errorText(e) });
}

// The cross-engine test's Dawn run (a Node child) starts now and trains while the kernel tests run.
let dawnEarly: Promise<unknown> | null = null;
if (adapter !== 'none' && files.some((f) => f.endsWith('cross_engine.test.ts'))) dawnEarly = startDawnRun();

if (adapter !== 'none') {
  for (const file of files) {
    const root = newSuite('');
    setRootSuite(root);
    const rel = file.replace(/^.*?tests\//, 'tests/');
    try {
      await import(new URL(file, `file://${process.cwd()}/`).href);
    } catch (e) {
      record({ file: rel, name: '(load)', status: 'failed', ms: 0, error: errorText(e) });
      continue;
    }
    let leftOut = 0;
    root.suites = root.suites.filter((c) => {
      const cpu = CPU_SUITE.test(c.name);
      if (cpu) leftOut += countTests(c);
      return !cpu;
    });
    if (leftOut > 0) console.log(`  (${rel}: ${leftOut} tests of the CPU backend left out)`);
    await runSuite(rel, root, [], []);
  }
  if (dawnEarly) await dawnEarly.catch(() => {}); // settled before the process exits
  if (files.length === wgpuFiles().length) {
    // A renamed or deleted gpu test file must leave LEFT_OUT too, or the list silently goes stale.
    const gone = Object.keys(LEFT_OUT).filter((f) => !existsSync(`tests/gpu/${f}`));
    record({
      file: 'tests/wgpu/run.ts',
      name: 'every file LEFT_OUT names exists in tests/gpu',
      status: gone.length ? 'failed' : 'passed',
      ms: 0,
      error: gone.length ? `not in tests/gpu: ${gone.join(', ')}` : undefined,
    });
    // Every kernel ran at least once (both variants where an op picks one by adapter kind).
    const missing = declaredKernels()
      .map(specKey)
      .filter((k) => !dispatched.has(k));
    const name = `every declared kernel was dispatched by some test (${declaredKernels().length - missing.length} of ${declaredKernels().length})`;
    record({ file: 'tests/wgpu/run.ts', name, status: missing.length ? 'failed' : 'passed', ms: 0, error: missing.length ? `never dispatched: ${missing.join(', ')}` : undefined });
  }
}

const passed = results.filter((r) => r.status === 'passed').length;
const failed = results.filter((r) => r.status === 'failed').length;
const skipped = results.filter((r) => r.status === 'skipped').length;
const seconds = (performance.now() - t0) / 1000;
if (jsonOut) {
  const { writeFileSync } = await import('node:fs');
  writeFileSync(jsonOut, JSON.stringify({ adapter, deno: Deno.version.deno, seconds, passed, failed, skipped, results }, null, 1));
}
console.log(`wgpu: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''} (${seconds.toFixed(1)} s on ${adapter})`);
Deno.exit(failed > 0 || passed === 0 ? 1 : 0);
