// The own model's iterations in the teaching views: the batches read off the inspector's traces
// (the live run's newest, a recorded file's), kept as they were while their traces are, shown when
// picked or when no playground run has a batch, with the settings they trained with; the worker's
// traces reach the views through the trainer client.
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { IterationTrace } from '../../src/rl/inspect/trace.ts';
import { createAppStore, shownConfig } from '../../src/store/appStore.ts';
import { type CapturedTrace, OWN_MODEL_RECORDED_ID, OWN_MODEL_RUN_ID, useInspection } from '../../src/store/inspection.ts';
import { configOfKnobs, ownModelBatches } from '../../src/store/ownModelBatches.ts';
import { traceBatch } from '../../src/store/traceBatch.ts';
import { DEFAULT_CONFIG } from '../../src/rl/configKnobs.ts';
import { clientHarness } from '../helpers/fakeTrainerWorker.ts';
import { buildTrace } from '../helpers/inspectTrace.ts';
import { rng } from '../helpers/random.ts';

function captured(runId: string, iter: number, extra: Partial<CapturedTrace> = {}): CapturedTrace {
  const trace: IterationTrace = { ...buildTrace(rng(500 + iter), { knobs: { advantageEstimator: 'group_norm', whiten: false, clipHigh: 0.28, tisCap: null } }), iter };
  return {
    runId,
    model: 'tiny qwen',
    trace,
    prompts: Array.from({ length: trace.B }, (_, b) => `What is ${b} + 1?`),
    tokenText: Array.from(trace.responseTokens, (id) => ` ${id}`),
    endedWithEos: Array.from({ length: trace.B }, (_, b) => b % 2 === 0),
    ...extra,
  };
}

describe('ownModelBatches', () => {
  it('the live run’s newest iteration, then the recorded one, each with its trace’s settings; a playground run’s traces are not among them', () => {
    const live1 = captured(OWN_MODEL_RUN_ID, 1);
    const live2 = captured(OWN_MODEL_RUN_ID, 2);
    const rec = captured(OWN_MODEL_RECORDED_ID, 120, { file: 'own-model-grpo.json' });
    const list = ownModelBatches([captured('run-1', 3, { model: undefined }), live2, live1, rec], []);
    expect(list.map((b) => [b.id, b.batch.samples?.iter, b.model, b.file])).toEqual([
      [OWN_MODEL_RUN_ID, 2, 'tiny qwen', undefined],
      [OWN_MODEL_RECORDED_ID, 120, 'tiny qwen', 'own-model-grpo.json'],
    ]);
    expect(list[0].batch).toEqual(traceBatch(live2));
    expect(list[0].config).toEqual({ ...DEFAULT_CONFIG, advantageEstimator: 'group_norm', clipHigh: 0.28, tisCap: null, klCoef: 0.05 });
    expect(list[0].batch.ratios?.clip.clipHigh).toBe(0.28);
    // the EOS flags and the token text are the trace's
    const step = live2.trace.minibatches.at(-1)!;
    list[0].batch.samples!.rows.forEach((row, i) => {
      expect(row.endedWithEos).toBe(step.rows[i] % 2 === 0);
      expect(row.prompt).toBe(`What is ${step.rows[i]} + 1?`);
      expect(row.tokens[0].text).toBe(` ${live2.trace.responseTokens[step.rows[i] * live2.trace.A]}`);
    });
  });

  it('keeps its list while the traces it read are the same, and a batch whose trace is unchanged', () => {
    const live = captured(OWN_MODEL_RUN_ID, 1);
    const rec = captured(OWN_MODEL_RECORDED_ID, 9, { file: 'f.json' });
    const first = ownModelBatches([live, rec], []);
    expect(ownModelBatches([rec, live], first)).toBe(first);
    const next = ownModelBatches([live, rec, captured(OWN_MODEL_RUN_ID, 2)], first);
    expect(next).not.toBe(first);
    expect(next[1]).toBe(first[1]);
    expect(next[0].batch.samples?.iter).toBe(2);
    expect(ownModelBatches([], next)).toEqual([]);
  });

  it('a trace without the EOS flags (a file made before them) has rows with no EOS status; one without an update step has no batch rows', () => {
    const { endedWithEos: _e, ...old } = captured(OWN_MODEL_RECORDED_ID, 4, { file: 'f.json' });
    expect(traceBatch(old).samples!.rows.every((r) => r.endedWithEos === null)).toBe(true);
    const noStep = captured(OWN_MODEL_RUN_ID, 5);
    expect(traceBatch({ ...noStep, trace: { ...noStep.trace, minibatches: [] } })).toEqual({ samples: null, ratios: null });
    // a trace whose arrays are missing gives no batch rather than an error in the store
    const broken = { ...noStep, trace: { iter: 6, B: 1, A: 1 } as IterationTrace };
    expect(ownModelBatches([broken], [])).toEqual([]);
  });

  it('the config an iteration stands for is the defaults with its knobs, whiten left out', () => {
    const k = captured(OWN_MODEL_RUN_ID, 1).trace.knobs;
    const cfg = configOfKnobs(k);
    expect('whiten' in cfg).toBe(false);
    for (const [key, v] of Object.entries(k)) if (key !== 'whiten') expect(cfg[key as keyof typeof cfg]).toEqual(v);
  });
});

describe('runs slice: which batch the views show', () => {
  it('the own model’s when no playground run has one; a playground run’s once it has; the own model’s again when picked, with its settings', () => {
    const store = createAppStore();
    const s = () => store.getState();
    const own = ownModelBatches([captured(OWN_MODEL_RUN_ID, 3)], []);
    s().setOwnBatches(own);
    expect([s().batchRunId, s().samples?.iter]).toEqual([OWN_MODEL_RUN_ID, 3]);
    expect(shownConfig(s())).toBe(own[0].config);

    const run = s().beginRun();
    // the run training is shown (empty until its first batch), as before
    expect([s().batchRunId, s().samples]).toEqual([run.id, null]);
    s().setSamples(run.id, { iter: 1, rows: [] });
    expect(s().samples?.iter).toBe(1);
    expect(shownConfig(s())).toBe(run.config);

    s().viewRun(OWN_MODEL_RUN_ID);
    expect([s().batchRunId, s().samples?.iter, s().ratios?.iter]).toEqual([OWN_MODEL_RUN_ID, 3, 3]);
    expect(shownConfig(s()).clipHigh).toBe(0.28);
    // a newer iteration of the own model replaces the picked batch in place
    s().setOwnBatches(ownModelBatches([captured(OWN_MODEL_RUN_ID, 4)], s().ownBatches));
    expect(s().samples?.iter).toBe(4);
    // gone (a fresh own-model run): the views follow the run training again
    s().setOwnBatches([]);
    expect([s().batchRunId, s().samples?.iter]).toEqual([run.id, 1]);
    // an id that is neither a run nor an own-model batch is not a pick
    s().viewRun('nothing');
    expect(s().viewRunId).toBeNull();
  });
});

describe('trainer client: the worker’s own-model traces reach the teaching views', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    useInspection.setState({ traces: [], capture: false, hacked: null, focus: null });
  });

  it('each hfTrace becomes the shown batch while no playground run has one; dropping the traces drops it', () => {
    const h = clientHarness();
    const c = captured(OWN_MODEL_RUN_ID, 1);
    h.client.receive({ type: 'hfTrace', trace: c.trace, prompts: c.prompts, tokenText: c.tokenText, endedWithEos: c.endedWithEos! });
    const st = h.store.getState();
    expect(st.ownBatches.map((b) => [b.id, b.batch.samples?.iter])).toEqual([[OWN_MODEL_RUN_ID, 1]]);
    expect(st.batchRunId).toBe(OWN_MODEL_RUN_ID);
    expect(st.samples).toEqual(traceBatch(c).samples);
    useInspection.getState().dropRun(OWN_MODEL_RUN_ID);
    expect([h.store.getState().ownBatches, h.store.getState().samples]).toEqual([[], null]);
    vi.useRealTimers();
  });
});
