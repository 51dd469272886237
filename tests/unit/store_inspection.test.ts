// The inspector's store keeps the last TRACES_KEPT traces of each run and drops a run's traces;
// an own-model iteration's trace comes with its model's label, one per iteration.
import { describe, expect, it } from 'vitest';
import type { IterationTrace } from '../../src/rl/inspect/trace.ts';
import { OWN_MODEL_RECORDED_ID, OWN_MODEL_RUN_ID, TRACES_KEPT, useInspection, type CapturedTrace } from '../../src/store/inspection.ts';

const captured = (runId: string, iter: number): CapturedTrace => ({ runId, trace: { iter } as IterationTrace, prompts: [], tokenText: [] });

describe('inspection store', () => {
  it('keeps the newest traces of each run, oldest dropped first', () => {
    useInspection.setState({ traces: [] });
    for (let i = 0; i < TRACES_KEPT + 3; i++) useInspection.getState().pushTrace(captured('a', i));
    useInspection.getState().pushTrace(captured('b', 0));
    const iters = (run: string) =>
      useInspection
        .getState()
        .traces.filter((t) => t.runId === run)
        .map((t) => t.trace.iter);
    expect(iters('a')).toEqual([3, 4, 5, 6, 7]);
    expect(iters('b')).toEqual([0]);
    expect(useInspection.getState().traces.at(-1)?.runId).toBe('b');
  });

  it('drops one run and keeps the others; the capture switch is plain state', () => {
    useInspection.setState({ traces: [] });
    useInspection.getState().pushTrace(captured('a', 0));
    useInspection.getState().pushTrace(captured('b', 0));
    useInspection.getState().dropRun('a');
    expect(useInspection.getState().traces.map((t) => t.runId)).toEqual(['b']);
    useInspection.getState().setCapture(true);
    expect(useInspection.getState().capture).toBe(true);
  });

  it('an own-model trace is kept under its run with the model’s label; a replayed iteration replaces its earlier trace; a malformed one is dropped', () => {
    useInspection.setState({ traces: [] });
    const msg = (iter: number, tag: string) => ({ type: 'hfTrace' as const, trace: { iter, B: 1, A: 2 } as IterationTrace, prompts: [tag], tokenText: ['x', ''] });
    useInspection.getState().pushTrace(captured('a', 0));
    useInspection.getState().ownModelTraceReceived(msg(1, 'first'), 'tiny-qwen3');
    useInspection.getState().ownModelTraceReceived(msg(2, 'first'), 'tiny-qwen3');
    useInspection.getState().ownModelTraceReceived(msg(2, 'replayed'), 'tiny-qwen3');
    useInspection.getState().ownModelTraceReceived({ ...msg(3, 'bad'), tokenText: ['x'] }, 'tiny-qwen3');
    const own = useInspection.getState().traces.filter((t) => t.runId === OWN_MODEL_RUN_ID);
    expect(own.map((t) => [t.trace.iter, t.prompts[0], t.model])).toEqual([
      [1, 'first', 'tiny-qwen3'],
      [2, 'replayed', 'tiny-qwen3'],
    ]);
    useInspection.getState().dropRun(OWN_MODEL_RUN_ID);
    expect(useInspection.getState().traces.map((t) => t.runId)).toEqual(['a']);
  });

  it('a run file’s trace shown as recorded stands apart from the live run’s, one at a time, even at the same iteration', () => {
    useInspection.setState({ traces: [] });
    const t = (iter: number, tag: string) => ({ trace: { iter, B: 1, A: 1 } as IterationTrace, prompts: [tag], tokenText: ['x'] });
    useInspection.getState().ownModelTraceReceived({ type: 'hfTrace', ...t(120, 'live') }, 'chat-arithmetic');
    useInspection.getState().recordedTraceShown(t(120, 'first file'), 'chat-arithmetic', 'a.json');
    useInspection.getState().recordedTraceShown(t(120, 'second file'), 'chat-arithmetic', 'b.json');
    expect(useInspection.getState().traces.map((c) => [c.runId, c.prompts[0], c.file])).toEqual([
      [OWN_MODEL_RUN_ID, 'live', undefined],
      [OWN_MODEL_RECORDED_ID, 'second file', 'b.json'],
    ]);
  });
});
