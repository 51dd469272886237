// The page's start-up (src/store/startup.ts), which the offline copy's download waits for: over
// when nothing starts on a GPU, or once the first kernels are built and nothing trains or the
// first iteration of a Start has arrived; `afterStartup` runs its callback once, then or after
// its fallback time.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { useApp } from '../../src/store/appStore.ts';
import { afterStartup, STARTUP_FALLBACK_MS, startupOver, type StartupView } from '../../src/store/startup.ts';
import type { GpuStatus } from '../../src/store/statusTypes.ts';

const warming: StartupView = { gpu: 'ready', backend: 'webgpu', compile: { done: 3, total: 28 }, runState: 'idle', iterations: 0 };

describe('startupOver', () => {
  it('is over at once without WebGPU, after a failed self-test, or on the CPU backend', () => {
    expect(startupOver({ ...warming, gpu: 'unavailable', compile: null }, 0)).toBe(true);
    expect(startupOver({ ...warming, gpu: 'error', compile: null }, 0)).toBe(true);
    expect(startupOver({ ...warming, backend: 'cpu', compile: null }, 0)).toBe(true);
  });

  it('goes on while the self-test runs, before the worker reports its kernels, and while they build', () => {
    expect(startupOver({ ...warming, gpu: 'checking', compile: null }, 0)).toBe(false);
    expect(startupOver({ ...warming, compile: null }, 0)).toBe(false);
    expect(startupOver(warming, 0)).toBe(false);
    expect(startupOver({ ...warming, compile: { done: 27, total: 28 }, runState: 'running' }, 0)).toBe(false);
  });

  it('with the kernels built: over when nothing trains, and for a Start only once an iteration arrived', () => {
    const built = { ...warming, compile: { done: 28, total: 28 } };
    expect(startupOver(built, 0)).toBe(true);
    expect(startupOver({ ...built, runState: 'paused' }, 0)).toBe(true);
    expect(startupOver({ ...built, runState: 'running' }, 0)).toBe(false);
    expect(startupOver({ ...built, runState: 'running', iterations: 12 }, 12)).toBe(false); // runs restored from an earlier visit
    expect(startupOver({ ...built, runState: 'running', iterations: 13 }, 12)).toBe(true);
  });
});

describe('afterStartup', () => {
  const ready: GpuStatus = {
    kind: 'ready',
    result: { type: 'selftest-ok', passed: true, ms: 1, kernel: 'kl', values: [], maxError: 0, tolerance: 1e-6, adapter: 'test' } as never,
  };
  beforeEach(() => {
    vi.useFakeTimers();
    useApp.setState({ gpu: { kind: 'checking' }, backend: 'webgpu', compile: null, runState: 'idle', runs: [] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('runs once, when the kernels are built, and not again on later changes', () => {
    const run = vi.fn();
    afterStartup(run);
    useApp.setState({ gpu: ready });
    useApp.setState({ compile: { done: 10, total: 28, seconds: 1 } });
    expect(run).not.toHaveBeenCalled();
    useApp.setState({ compile: { done: 28, total: 28, seconds: 2 } });
    expect(run).toHaveBeenCalledTimes(1);
    useApp.setState({ runState: 'paused' });
    vi.advanceTimersByTime(STARTUP_FALLBACK_MS);
    expect(run).toHaveBeenCalledTimes(1);
  });

  it('runs at once where start-up is already over, and after the fallback time where it never reports', () => {
    useApp.setState({ gpu: { kind: 'unavailable', reason: 'no-navigator-gpu', message: 'no WebGPU' } });
    const now = vi.fn();
    afterStartup(now);
    expect(now).toHaveBeenCalledTimes(1);

    useApp.setState({ gpu: ready });
    const later = vi.fn();
    afterStartup(later);
    vi.advanceTimersByTime(STARTUP_FALLBACK_MS - 1);
    expect(later).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(later).toHaveBeenCalledTimes(1);
  });
});
