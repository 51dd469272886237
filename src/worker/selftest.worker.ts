// Self-test Web Worker: on load it acquires the WebGPU device, runs each op's self-test case
// (src/ops/selftests.ts: the KL kernel, every estimator, on a small fixed input) and compares it
// with the float64 reference, then posts one SelftestResult. It proves the whole chain (adapter →
// device → WGSL → dispatch → readback) works before the trainer starts, and keeps all GPU work off
// the page's main thread. It loads only those ops and their shaders: it runs while the page
// starts, and its script competes with the page's for the CPU.
/// <reference lib="webworker" />
import { WebGpuBackend } from '../backend/webgpu/webgpuBackend.ts';
import { acquireDevice, GpuUnavailableError } from '../gpu/device.ts';
import { GpuRuntime } from '../gpu/runtime.ts';
import { registerShaderGlob } from '../gpu/shaders.ts';
import { SELFTESTS } from '../ops/selftests.ts';
import type { SelftestResult } from './protocol.ts';

// The self-test ops' shaders with their includes (tests/unit/selftests.test.ts checks the list).
registerShaderGlob(import.meta.glob(['/shaders/kl.wgsl', '/shaders/lib_kl.wgsl'], { query: '?raw', import: 'default', eager: true }) as Record<string, string>);

/** float32 element-wise tolerance (DESIGN: ~1e-5 relative), applied as |err| ≤ TOL·max(1, |ref|). */
const TOLERANCE = 1e-5;

const post = (msg: SelftestResult) => (self as unknown as DedicatedWorkerGlobalScope).postMessage(msg);

async function run(): Promise<void> {
  const t0 = performance.now();
  let acquired: Awaited<ReturnType<typeof acquireDevice>>;
  try {
    acquired = await acquireDevice();
  } catch (e) {
    if (e instanceof GpuUnavailableError) post({ type: 'selftest-unavailable', reason: e.reason, message: e.message, shortfalls: [...e.shortfalls], browserError: e.browserError });
    else post({ type: 'selftest-error', message: String(e) });
    return;
  }
  const be = new WebGpuBackend(new GpuRuntime(acquired.device, acquired.adapterName));
  const values: number[] = [];
  const reference: number[] = [];
  for (const test of SELFTESTS) {
    const r = await test.run(be);
    values.push(...r.values);
    reference.push(...r.reference);
  }
  let maxAbsErr = 0;
  let passed = true;
  values.forEach((got, j) => {
    const want = reference[j];
    const err = Math.abs(got - want);
    // NaN compares false everywhere, so test it explicitly.
    if (!(err <= TOLERANCE * Math.max(1, Math.abs(want)))) passed = false;
    maxAbsErr = Math.max(maxAbsErr, Number.isNaN(err) ? Infinity : err);
  });
  post({
    type: 'selftest-ok',
    adapter: acquired.adapterName,
    backendLabel: be.label,
    kernel: SELFTESTS.map((t) => t.label).join('; '),
    values,
    reference,
    maxAbsErr,
    passed,
    tolerance: TOLERANCE,
    ms: performance.now() - t0,
    about: acquired.about,
  });
}

run().catch((e: unknown) => post({ type: 'selftest-error', message: e instanceof Error ? e.message : String(e) }));
