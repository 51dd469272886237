// The client's side of SFT in the tab: trainSft is a request answered by its own sftDone (by id),
// the progress of the running SFT becomes its loss curve and phase evaluations, progress with no
// SFT running is dropped, a worker's error ends the request with its message, and every new
// worker is handed the SFT models the page keeps before any other command.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { useSft } from '../../src/store/sftState.ts';
import { clientHarness } from '../helpers/fakeTrainerWorker.ts';

const M = { nLayer: 4, nHead: 4, dModel: 128 };
const meta = { task: 'arithmetic', ...M, seed: 1, steps: 6, backend: 'fake' };

beforeEach(() => {
  vi.useFakeTimers();
  useSft.setState({ models: {}, run: null, timings: {}, problem: null });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('trainer client: SFT in the tab', () => {
  it('trainSft is answered by the sftDone carrying its id; progress draws the running curve', async () => {
    const h = clientHarness();
    useSft.getState().setRun({ task: 'arithmetic', dims: M, status: 'running', phase: 0, phases: 0, doneSteps: 0, totalSteps: 0, seconds: 0, loss: [], evals: [] });
    const done = h.client.models.trainSft(M, 3);
    const sent = h.worker.of('trainSft')[0];
    expect(sent).toMatchObject({ dims: M, phaseSteps: 3 });
    h.worker.reply({ type: 'sftProgress', requestId: sent.requestId, phase: 0, phases: 2, doneSteps: 1, totalSteps: 6, loss: 2.5, seconds: 1 });
    h.worker.reply({ type: 'sftProgress', requestId: sent.requestId, phase: 1, phases: 2, doneSteps: 4, totalSteps: 6, loss: 1.5, seconds: 4 });
    h.worker.reply({ type: 'sftPhaseEval', requestId: sent.requestId, phase: 0, label: 'tutor', metrics: { accuracy: 0.5 } });
    expect(useSft.getState().run).toMatchObject({
      phase: 1,
      phases: 2,
      doneSteps: 4,
      totalSteps: 6,
      loss: [
        { step: 1, loss: 2.5 },
        { step: 4, loss: 1.5 },
      ],
      evals: [{ phase: 0, label: 'tutor', metrics: { accuracy: 0.5 } }],
    });
    const bytes = new Uint8Array([1, 2, 3]).buffer;
    h.worker.reply({ type: 'sftDone', requestId: sent.requestId + 100, bytes: new ArrayBuffer(1), meta, seconds: 6 });
    expect(h.pending()).toBe(1);
    h.worker.reply({ type: 'sftDone', requestId: sent.requestId, bytes, meta, seconds: 6 });
    await expect(done).resolves.toMatchObject({ meta, seconds: 6 });
    expect(h.pending()).toBe(0);
  });

  it('progress with no SFT running is dropped; a worker error ends the request with its message', async () => {
    const h = clientHarness();
    h.client.models.cancelSft(); // starts the worker
    h.worker.reply({ type: 'sftProgress', phase: 0, phases: 2, doneSteps: 1, totalSteps: 6, loss: 2.5, seconds: 1 });
    expect(useSft.getState().run).toBeNull();
    const done = h.client.models.trainSft(M);
    const id = h.worker.idOf('trainSft');
    h.worker.reply({ type: 'error', message: 'SFT model size not allowed: nHead = 3', requestId: id });
    await expect(done).resolves.toEqual({ failed: 'SFT model size not allowed: nHead = 3' });
  });

  it('a new worker gets the kept SFT models, per task, before its first command', () => {
    const bytes = new Uint8Array([7, 7]).buffer;
    useSft.getState().setModel({ task: 'sentiment', origin: 'tab', dims: M, meta: { ...meta, task: 'sentiment' }, bytes, savedAt: 0 });
    const h = clientHarness();
    h.client.models.cancelSft();
    const [first] = h.worker.sent;
    expect(first).toMatchObject({ type: 'loadCheckpoint', role: 'actor', task: 'sentiment' });
    expect([...new Uint8Array((first as { bytes: ArrayBuffer }).bytes)]).toEqual([7, 7]);
    expect(h.worker.of('cancelSft')).toHaveLength(1);
  });
});
