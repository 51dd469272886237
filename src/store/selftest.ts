// Starts the self-test worker once and records its verdict in the store.
import { t } from '../i18n/index.ts';
import type { SelftestResult } from '../worker/protocol.ts';
import { useApp } from './appStore.ts';
import { applyLighterBatch } from './lightBatch.ts';

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
      ? t('notices:selftest.noNavigatorGpu', { api: 'navigator.gpu' })
      : t('notices:selftest.insecure', { https: 'https://', localhost: 'localhost' });
    setGpu({ kind: 'unavailable', reason: 'no-navigator-gpu', message: msg });
    return;
  }
  let worker: Worker;
  try {
    worker = new Worker(new URL('../worker/selftest.worker.ts', import.meta.url), { type: 'module', name: 'selftest' });
  } catch (e) {
    setGpu({ kind: 'error', message: t('notices:selftest.workerNotStarted', { error: String(e) }) });
    return;
  }
  const timer = setTimeout(() => {
    setGpu({ kind: 'error', message: t('notices:selftest.timedOut', { seconds: SELFTEST_TIMEOUT_MS / 1000 }) });
    worker.terminate();
  }, SELFTEST_TIMEOUT_MS);
  worker.onmessage = (ev: MessageEvent<SelftestResult>) => {
    clearTimeout(timer);
    const r = ev.data;
    if (r.type === 'selftest-ok') {
      setGpu({ kind: 'ready', result: r });
      applyLighterBatch(r.about?.limits ?? []);
    } else if (r.type === 'selftest-unavailable')
      setGpu({ kind: 'unavailable', reason: r.reason, message: r.message, shortfalls: r.shortfalls ?? [], browserError: r.browserError });
    else setGpu({ kind: 'error', message: r.message });
    // The device lives in the worker; closing it frees the GPU for the trainer.
    worker.terminate();
  };
  worker.onerror = (ev) => {
    clearTimeout(timer);
    setGpu({ kind: 'error', message: t('notices:selftest.workerFailed', { error: ev.message || t('notices:selftest.unknownError') }) });
    worker.terminate();
  };
}
