// Starts the self-test worker once and records its verdict in the store.
import type { SelftestResult } from '../worker/protocol.ts';
import { useApp } from './appStore.ts';

/** Worker start-up plus one tiny kernel; SwiftShader compiles slowly, so be generous. */
const SELFTEST_TIMEOUT_MS = 45_000;

let started = false;

export function runSelftest(): void {
  if (started) return;
  started = true;
  const { setGpu } = useApp.getState();
  // Workers expose WebGPU exactly when the window does; checking here (no GPU work) answers the
  // commonest failure instantly and without a worker.
  if (typeof navigator === 'undefined' || !('gpu' in navigator) || !navigator.gpu) {
    const msg = window.isSecureContext
      ? 'This browser does not expose WebGPU (navigator.gpu is undefined): it is too old, or WebGPU is switched off. The steps below switch it on.'
      : 'WebGPU is only available on secure pages: open the playground over https:// or from localhost.';
    setGpu({ kind: 'unavailable', reason: 'no-navigator-gpu', message: msg });
    return;
  }
  let worker: Worker;
  try {
    worker = new Worker(new URL('../worker/selftest.worker.ts', import.meta.url), { type: 'module', name: 'selftest' });
  } catch (e) {
    setGpu({ kind: 'error', message: `Could not start the self-test worker: ${String(e)}` });
    return;
  }
  const timer = setTimeout(() => {
    setGpu({ kind: 'error', message: `The WebGPU self-test did not finish within ${SELFTEST_TIMEOUT_MS / 1000} s.` });
    worker.terminate();
  }, SELFTEST_TIMEOUT_MS);
  worker.onmessage = (ev: MessageEvent<SelftestResult>) => {
    clearTimeout(timer);
    const r = ev.data;
    if (r.type === 'selftest-ok') setGpu({ kind: 'ready', result: r });
    else if (r.type === 'selftest-unavailable') setGpu({ kind: 'unavailable', reason: r.reason, message: r.message, shortfalls: r.shortfalls ?? [] });
    else setGpu({ kind: 'error', message: r.message });
    // The device lives in the worker; closing it frees the GPU for the trainer.
    worker.terminate();
  };
  worker.onerror = (ev) => {
    clearTimeout(timer);
    setGpu({ kind: 'error', message: `The self-test worker failed: ${ev.message || 'unknown error'}` });
    worker.terminate();
  };
}
