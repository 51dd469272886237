// Self-test Web Worker: on load it acquires the WebGPU device, runs the KL kernel (every
// estimator) on a small fixed input and compares it with the float64 reference, then posts one
// SelftestResult. It proves the whole chain (adapter → device → WGSL → dispatch → readback) works
// before the trainer starts, and keeps all GPU work off the page's main thread.
/// <reference lib="webworker" />
import { KL_ESTIMATORS } from '../backend/ppoOps.ts';
import { WebGpuBackend } from '../backend/webgpu/webgpuBackend.ts';
import { acquireDevice, GpuUnavailableError } from '../gpu/device.ts';
import { GpuRuntime } from '../gpu/runtime.ts';
import { registerShaderGlob } from '../gpu/shaders.ts';
import { klRef } from '../reference/kl.ts';
import type { SelftestResult } from './protocol.ts';

registerShaderGlob(import.meta.glob('/shaders/*.wgsl', { query: '?raw', import: 'default', eager: true }) as Record<string, string>);

// Fixed inputs chosen to exercise every branch: equal values, both signs of d, and a d far
// outside k3's ±20 clamp. All are exact in float32, so the only error is the kernel's arithmetic.
const LOGP = [-0.5, -1.25, -2, -0.125, -3, -40];
const REF_LOGP = [-0.5, -1, -2.75, -0.625, -1.5, -0.25];
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
  const n = LOGP.length;
  const lp = be.tensor(LOGP, [1, n]);
  const rf = be.tensor(REF_LOGP, [1, n]);
  const outs = KL_ESTIMATORS.map((est) => be.ppo.kl(lp, rf, est));
  const got = await be.readMany(outs);
  const values: number[] = [];
  const reference: number[] = [];
  let maxAbsErr = 0;
  let passed = true;
  KL_ESTIMATORS.forEach((est, i) => {
    const want = klRef(LOGP, REF_LOGP, est);
    for (let j = 0; j < n; j++) {
      const err = Math.abs(got[i][j] - want[j]);
      // NaN compares false everywhere, so test it explicitly.
      if (!(err <= TOLERANCE * Math.max(1, Math.abs(want[j])))) passed = false;
      maxAbsErr = Math.max(maxAbsErr, Number.isNaN(err) ? Infinity : err);
      values.push(got[i][j]);
      reference.push(want[j]);
    }
  });
  be.dispose(lp, rf, ...outs);
  post({
    type: 'selftest-ok',
    adapter: acquired.adapterName,
    backendLabel: be.label,
    kernel: `kl (${KL_ESTIMATORS.join(', ')})`,
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
