// The trainer client's side of the inspector, with a fake worker: the capture switch of
// useInspection reaches the worker (now, and a worker started later), captured iterations land
// in the active run's traces, and traces of a run that was reset or replayed are dropped as its
// metrics are.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { hackedSample } from '../../src/rl/inspect/hackedSample.ts';
import type { IterationTrace } from '../../src/rl/inspect/trace.ts';
import { REWARD_HACKING } from '../../src/rl/presets.ts';
import { useInspection } from '../../src/store/inspection.ts';
import type { WorkerToPage } from '../../src/worker/protocol.ts';
import { clientHarness, metrics } from '../helpers/fakeTrainerWorker.ts';
import { buildTrace } from '../helpers/inspectTrace.ts';
import { rng } from '../helpers/random.ts';

function traceMsg(iter: number): WorkerToPage {
  const trace: IterationTrace = { ...buildTrace(rng(iter + 100)), iter };
  return { type: 'trace', iter, trace, prompts: Array(trace.B).fill('2+3='), tokenText: Array(trace.B * trace.A).fill('5') };
}

beforeEach(() => {
  vi.useFakeTimers();
  useInspection.setState({ traces: [], capture: false, hacked: null, focus: null });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('trainer client: iteration traces', () => {
  it('sends setCapture when the switch changes, to the worker running now and to a new one', async () => {
    const h = clientHarness();
    await h.client.step();
    const first = h.worker;
    useInspection.getState().setCapture(true);
    useInspection.getState().setCapture(true); // no change, nothing sent
    useInspection.getState().setCapture(false);
    expect(first.of('setCapture')).toEqual([
      { type: 'setCapture', on: true },
      { type: 'setCapture', on: false },
    ]);

    useInspection.getState().setCapture(true);
    h.client.connection.drop(); // e.g. the page moved to another backend
    await h.client.step();
    expect(h.worker).not.toBe(first);
    expect(h.worker.of('setCapture')).toEqual([{ type: 'setCapture', on: true }]);
    // It is set before the step that should capture.
    expect(h.worker.sent.findIndex((m) => m.type === 'setCapture')).toBeLessThan(h.worker.sent.findIndex((m) => m.type === 'step'));
  });

  it('a new worker with capture off is told nothing', async () => {
    const h = clientHarness();
    await h.client.step();
    expect(h.worker.of('setCapture')).toEqual([]);
  });

  it('a trace joins the active run; malformed ones and those of a reset run are dropped', async () => {
    const h = clientHarness();
    await h.client.step();
    h.worker.reply(metrics(0));
    h.worker.reply(traceMsg(0));
    const runId = h.store.getState().activeRunId!;
    expect(useInspection.getState().traces.map((t) => [t.runId, t.trace.iter, t.prompts[0], t.tokenText.length])).toEqual([[runId, 0, '2+3=', 72]]);

    const bad = traceMsg(1) as Extract<WorkerToPage, { type: 'trace' }>;
    h.worker.reply({ ...bad, tokenText: ['x'] });
    h.worker.reply({ ...bad, prompts: undefined as unknown as string[] });
    expect(useInspection.getState().traces).toHaveLength(1);

    // Reset: the iteration in flight still reports, and belongs to no run.
    await h.client.reset();
    h.worker.reply(metrics(1));
    h.worker.reply(traceMsg(1));
    expect(useInspection.getState().traces.map((t) => t.trace.iter)).toEqual([0]);
    h.worker.reply({ type: 'resetDone' });
  });

  it('traces of iterations replayed after a device loss are dropped with their metrics', async () => {
    const h = clientHarness();
    await h.client.start();
    for (const i of [0, 1, 2]) {
      h.worker.reply(metrics(i));
      h.worker.reply(traceMsg(i));
    }
    h.worker.reply({ type: 'deviceLost', reason: 'lost', iter: 2 });
    h.worker.reply({ type: 'deviceRecovered', adapter: 'x', fromIter: 1, lostAt: 2, replayed: 1, resumed: true });
    expect(useInspection.getState().traces.map((t) => t.trace.iter)).toEqual([0]);
  });

  it('reward hacking, Run both: the β = 0 arm asks for its last iteration and offers its hacked response; β = 0.6 does not', async () => {
    const h = clientHarness();
    h.store.getState().setBudgetOverride(2);
    await h.client.runArms(REWARD_HACKING);
    expect(h.worker.of('start').at(-1)).toEqual({ type: 'start', untilIter: 2, captureLast: true });
    const hackRun = h.store.getState().activeRunId!;
    h.worker.reply(metrics(0));
    h.worker.reply(traceMsg(0)); // an open inspector's capture, not the end of the budget
    expect(useInspection.getState().hacked).toBeNull();
    h.worker.reply(metrics(1));
    const last = traceMsg(1) as Extract<WorkerToPage, { type: 'trace' }>;
    h.worker.reply(last);
    expect(useInspection.getState().hacked).toEqual({ runId: hackRun, iter: 1, row: hackedSample(last.trace) });
    h.worker.reply({ type: 'finished', iter: 2 });
    await h.advance(0);

    expect(h.store.getState().runs.map((r) => r.name)).toEqual(['β = 0', 'β = 0.6']);
    expect(h.worker.of('start').at(-1)).toEqual({ type: 'start', untilIter: 2 });
    h.worker.reply(metrics(0));
    h.worker.reply(metrics(1));
    h.worker.reply(traceMsg(1));
    expect(useInspection.getState().hacked?.runId).toBe(hackRun);
  });

  it("the user's Pause and Space ask the worker to capture the iteration in flight; the page's own pauses do not", async () => {
    const h = clientHarness();
    await h.client.start();
    await h.client.pause({ captureInFlight: true });
    await h.client.start();
    await h.client.toggle(); // Space while running
    await h.client.start();
    await h.client.pause(); // e.g. before a checkpoint download
    expect(h.worker.of('pause')).toEqual([{ type: 'pause', captureInFlight: true }, { type: 'pause', captureInFlight: true }, { type: 'pause' }]);
    // The capture switch itself is untouched: the worker captures that one iteration only.
    expect(h.worker.of('setCapture')).toEqual([]);
    expect(useInspection.getState().capture).toBe(false);
  });
});
