// Run files (src/store/runFile.ts, runFiles.ts): a run with its metrics, evaluations, latest batch
// and inspected iterations written to one file reads back equal, field by field and array by array;
// a file of another format or version, or a damaged one, is refused naming why and where, and the
// page's runs, batches and traces stay as they were.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { checked, DEFAULT_CONFIG } from '../../src/rl/config.ts';
import { recomputeTrace } from '../../src/rl/inspect/index.ts';
import { ITERATION_METRICS, type MetricName } from '../../src/rl/metricNames.ts';
import { useApp } from '../../src/store/appStore.ts';
import type { RunBatch } from '../../src/store/batches.ts';
import { metricsToJson } from '../../src/store/exportMetrics.ts';
import { type CapturedTrace, useInspection } from '../../src/store/inspection.ts';
import { fromBase64, RunFileError, toBase64 } from '../../src/store/fileChecks.ts';
import { RUN_FILE_VERSION, readRunFile, runFileText } from '../../src/store/runFile.ts';
import { decodeTrainerState, encodeTrainerState } from '../../src/rl/trainerState.ts';
import { paramLayout } from '../../src/model/params.ts';
import { getTask } from '../../src/tasks/index.ts';
import { fetchServedRunFile, openRunFile, openServedRunFile, restoreRecordedRuns, runFileName, useClassQuestions, useRecordedStates } from '../../src/store/runFiles.ts';
import { BATCHES, DB_NAME, openDb, RECORDED, RUNS, SFT, STATES, withStores } from '../../src/store/db.ts';
import { installMemoryIndexedDb, type MemoryIndexedDb } from '../helpers/memoryIndexedDb.ts';
import type { RunRecord } from '../../src/store/runs.ts';
import { mutatedRunFile } from '../../src/fuzz/files.ts';
import { buildTrace } from '../helpers/inspectTrace.ts';
import { rng } from '../helpers/random.ts';
import type { Rng } from '../../src/util/rng.ts';

const METRICS = ITERATION_METRICS.filter((m) => m !== 'iter') as MetricName[];

function recordedRun(r: Rng, id = 'run-a'): RunRecord {
  return {
    id,
    name: 'GAE, seed 3 — “tight” clip',
    color: '#0072B2',
    visible: true,
    comparison: 2,
    config: checked({ ...DEFAULT_CONFIG, clipLow: 0.1, clipHigh: 0.1, seed: 3 }),
    backend: 'cpu',
    backends: [
      { fromIter: 0, backend: 'webgpu' },
      { fromIter: 4, backend: 'cpu' },
    ],
    createdAt: 1_790_000_000_000,
    metrics: Array.from({ length: 12 }, (_, i) => ({ iter: i, values: Object.fromEntries(METRICS.slice(0, 20).map((m) => [m, r.normal() * 10 ** r.int(-6, 4)])) })),
    evals: [
      { iter: 0, values: { accuracy: 0.25, greedy_accuracy: 0.3 }, prompts: 38, seconds: 1.5 },
      { iter: 10, values: { accuracy: 0.5, greedy_accuracy: 0.55 } },
    ],
    budget: 300,
    preset: 'Tight vs loose clipping',
  };
}

function batchOf(r: Rng): RunBatch {
  const token = () => ({
    text: 'x',
    advantage: r.normal(),
    kl: r.normal() * 0.01,
    ratio: 1 + r.normal() * 0.1,
    value: r.normal(),
    refLogprob: -r.next(),
    rejected: r.next() < 0.5,
  });
  return {
    samples: { iter: 11, rows: [{ prompt: '12+3=', response: '15', reward: 1, endedWithEos: true, tokens: [token(), token(), token()] }] },
    ratios: { iter: 11, ratios: [1.02, 0.7, 1.4], advantages: [0.5, -1, 2], clip: { clipLow: 0.1, clipHigh: 0.1, dualClip: 3 } },
  };
}

function tracesOf(r: Rng, runId: string): CapturedTrace[] {
  return [0, 1].map((k) => {
    const trace = { ...buildTrace(r, { allMaskedRow: 0, lengthOneRow: 1, holeRow: 2 }), iter: 10 + k };
    return {
      runId,
      trace,
      prompts: Array.from({ length: trace.B }, (_, b) => `p${b}`),
      tokenText: Array.from({ length: trace.B * trace.A }, (_, j) => String.fromCharCode(97 + (j % 26))),
    };
  });
}

/** A parsed run file, edited freely (what JSON.parse returns). */
type Doc = ReturnType<typeof JSON.parse>;

/** A run file with `edit` applied to its parsed JSON. */
function edited(text: string, edit: (doc: Doc) => void): string {
  const doc = JSON.parse(text);
  edit(doc);
  return JSON.stringify(doc);
}

function refusal(text: string, what = 'the file'): RunFileError {
  try {
    readRunFile(text);
  } catch (e) {
    expect(e).toBeInstanceOf(RunFileError);
    return e as RunFileError;
  }
  throw new Error(`${what} was read, not refused`);
}

describe('a run file', () => {
  it('reads back the run, its batch and its traces exactly (every typed array, every recomputed stage)', () => {
    const r = rng(1);
    const run = recordedRun(r);
    const batch = batchOf(r);
    const traces = tracesOf(r, run.id);
    const other = tracesOf(r, 'run-b');
    const text = runFileText(run, batch, [...traces, ...other], { savedAt: new Date('2026-11-29T10:00:00Z') });
    const back = readRunFile(text);
    const { id: _i, color: _c, visible: _v, comparison: _k, ...rest } = run;
    expect(back.run).toEqual(rest);
    expect(back.batch).toEqual(batch);
    expect(back.savedAt).toBe('2026-11-29T10:00:00.000Z');
    // Only the run's own traces, in order.
    expect(back.traces).toHaveLength(2);
    back.traces.forEach((t, k) => {
      const want = traces[k];
      expect(t.prompts).toEqual(want.prompts);
      expect(t.tokenText).toEqual(want.tokenText);
      expect(t.trace.responseTokens).toEqual(want.trace.responseTokens);
      expect(t.trace.oldLogprobs).toEqual(want.trace.oldLogprobs);
      expect(t.trace.stored.advantages).toEqual(want.trace.stored.advantages);
      expect(t.trace.minibatches.map((m) => Array.from(m.newLogprobs))).toEqual(want.trace.minibatches.map((m) => Array.from(m.newLogprobs)));
      // What the inspector shows is recomputed from these tensors: equal to the last float bit.
      const a = recomputeTrace(t.trace);
      const b = recomputeTrace(want.trace);
      expect(Array.from(a.advantages)).toEqual(Array.from(b.advantages));
      expect(a.minibatches.map((m) => Array.from(m.tokenLoss))).toEqual(b.minibatches.map((m) => Array.from(m.tokenLoss)));
    });
  });

  it('reads a run without evaluations, batch or traces, and a batch with only samples', () => {
    const r = rng(2);
    const { evals: _e, backends: _b, budget: _u, preset: _p, ...bare } = recordedRun(r);
    const back = readRunFile(runFileText(bare as RunRecord, { samples: batchOf(r).samples, ratios: null }, []));
    expect(back.run.evals).toBeUndefined();
    expect(back.batch?.ratios).toBeNull();
    expect(back.traces).toEqual([]);
    expect(readRunFile(runFileText(bare as RunRecord, null, [])).batch).toBeNull();
  });

  it('is refused by name when it is not JSON, another kind of file, or another version', () => {
    const text = runFileText(recordedRun(rng(3)), null, []);
    expect(refusal(text.slice(0, text.length / 2)).reason).toBe('not-json');
    const metrics = refusal(metricsToJson([recordedRun(rng(3))]));
    expect(metrics.reason).toBe('not-a-run');
    expect(refusal('[1, 2]').reason).toBe('not-a-run');
    const v2 = refusal(edited(text, (d) => (d.version = 2)));
    expect([v2.reason, v2.found]).toEqual(['version', '2']);
    expect(v2.message).toContain(`reads version ${RUN_FILE_VERSION}`);
  });

  it('is refused naming the damaged field', () => {
    const r = rng(4);
    const run = recordedRun(r);
    const text = runFileText(run, batchOf(r), tracesOf(r, run.id));
    const cases: [string, (d: Doc) => void][] = [
      ['run.metrics[1].values.reward_mean', (d) => (d.run.metrics[1].values.reward_mean = 'high')],
      ['run.metrics[2].values.kl', (d) => (d.run.metrics[2].values.kl = null)],
      ['run.metrics[0].values', (d) => (d.run.metrics[0].values.not_a_metric = 1)],
      ['run.metrics[3]', (d) => (d.run.metrics[3].iter = -1)],
      ['run.config', (d) => (d.run.config.clipLow = -1)],
      ['run.config', (d) => (d.run.config = null)],
      ['run.config', (d) => (d.run.config.learningRate = 'fast')],
      ['run.backend', (d) => (d.run.backend = 'tpu')],
      ['run.evals[1].values.accuracy', (d) => (d.run.evals[1].values.accuracy = '1')],
      ['run.budget', (d) => (d.run.budget = 2.5)],
      ['run.name', (d) => (d.run.name = 7)],
      ['savedAt', (d) => (d.savedAt = 'yesterday')],
      ['batch.ratios', (d) => d.batch.ratios.advantages.pop()],
      ['batch.samples.rows[0].tokens[1].ratio', (d) => (d.batch.samples.rows[0].tokens[1].ratio = null)],
      ['batch.samples.rows[0].tokens[0].rejected', (d) => (d.batch.samples.rows[0].tokens[0].rejected = 'yes')],
      ['traces[1].trace', (d) => d.traces[1].trace.oldLogprobs.pop()],
      ['traces[0].trace.refLogprobs[3]', (d) => (d.traces[0].trace.refLogprobs[3] = null)],
      ['traces[0]', (d) => d.traces[0].prompts.pop()],
      ['traces[1].trace', (d) => (d.traces[1].trace.minibatches[0].rows[0] = 999)],
    ];
    for (const [field, edit] of cases) {
      const e = refusal(edited(text, edit), `the file damaged at ${field}`);
      expect([e.reason, e.field], field).toEqual(['damaged', field]);
      expect(e.message.startsWith(field)).toBe(true);
    }
  });

  it('never escapes its checks: a mutated file is read whole or refused with a RunFileError', () => {
    const r = rng(5);
    const run = recordedRun(r);
    const text = runFileText(run, batchOf(r), tracesOf(r, run.id).slice(0, 1));
    let refused = 0;
    for (let i = 0; i < 300; i++) {
      const bad = mutatedRunFile(r, text);
      try {
        const back = readRunFile(bad);
        // Read whole: every metric value a finite number.
        for (const p of back.run.metrics) for (const v of Object.values(p.values)) expect(Number.isFinite(v)).toBe(true);
      } catch (e) {
        expect(e, String(e)).toBeInstanceOf(RunFileError);
        refused++;
      }
    }
    expect(refused).toBeGreaterThan(100);
  });

  it('has a file name every system keeps', () => {
    expect(runFileName({ name: 'GAE, seed 3 — “tight” clip' }, new Date('2026-11-29T10:00:00Z'))).toBe('ppo-run-GAE-seed-3-tight-clip-2026-11-29-10-00-00.json');
    expect(runFileName({ name: '../../etc/passwd' }, new Date('2026-11-29T10:00:00Z'))).toBe('ppo-run-etc-passwd-2026-11-29-10-00-00.json');
    expect(runFileName({ name: '紧的裁剪' }, new Date(0))).toBe('ppo-run-紧的裁剪-1970-01-01-00-00-00.json');
    expect(runFileName({ name: '///' }, new Date(0))).toBe('ppo-run-run-1970-01-01-00-00-00.json');
  });
});

describe('opening a run file in the page', () => {
  beforeEach(() => {
    useApp.setState({ runs: [], batches: {}, activeRunId: null, viewRunId: null, notice: null });
    useInspection.setState({ traces: [] });
  });

  const asFile = (name: string, text: string) => ({ name, size: text.length, text: async () => text });

  it('adds a new run marked recorded, with its batch on the teaching views and its traces in the inspector', async () => {
    const r = rng(6);
    const run = recordedRun(r);
    const batch = batchOf(r);
    const text = runFileText(run, batch, tracesOf(r, run.id));
    const training = useApp.getState().beginRun();
    const opened = (await openRunFile(asFile('tight.json', text))).run;
    const s = useApp.getState();
    expect(opened).not.toBeNull();
    expect(opened!.id).not.toBe(run.id);
    expect(s.runs.map((x) => x.id)).toEqual([training.id, opened!.id]);
    expect(s.activeRunId).toBe(training.id);
    expect(opened!.recorded?.file).toBe('tight.json');
    expect(opened!.metrics).toEqual(run.metrics);
    expect(s.batchRunId).toBe(opened!.id);
    expect(s.ratios).toEqual(batch.ratios);
    expect(useInspection.getState().traces.map((t) => [t.runId, t.trace.iter])).toEqual([
      [opened!.id, 10],
      [opened!.id, 11],
    ]);
    expect(s.notice?.tone).toBe('info');
    expect(s.notice?.text).toContain('tight.json');
  });

  it('refuses a damaged file naming the file and the field, and leaves runs, batches and traces as they were', async () => {
    const r = rng(7);
    const run = recordedRun(r);
    await openRunFile(asFile('good.json', runFileText(run, batchOf(r), tracesOf(r, run.id))));
    const before = { app: useApp.getState(), traces: useInspection.getState().traces };
    const bad = edited(runFileText(run, batchOf(r), []), (d) => (d.run.metrics[5].values.kl = 'NaN'));
    const refused = await openRunFile(asFile('bad.json', bad));
    expect(refused.run).toBeNull();
    expect(refused.message).toBe(useApp.getState().notice?.text);
    const s = useApp.getState();
    expect(s.runs).toBe(before.app.runs);
    expect(s.batches).toBe(before.app.batches);
    expect(useInspection.getState().traces).toBe(before.traces);
    expect(s.notice?.tone).toBe('error');
    expect(s.notice?.text).toContain('bad.json');
    expect(s.notice?.text).toContain('run.metrics[5].values.kl');
    const huge = { name: 'huge.json', size: 65 * 2 ** 20, text: async () => '' };
    expect((await openRunFile(huge)).run).toBeNull();
    expect(useApp.getState().notice?.text).toContain('64 MiB');
    expect(useApp.getState().runs).toBe(before.app.runs);
  });
});

describe('a run file served with the page (?run=)', () => {
  beforeEach(() => {
    useApp.setState({ runs: [], batches: {}, activeRunId: null, viewRunId: null, notice: null });
    useInspection.setState({ traces: [] });
  });
  afterEach(() => vi.unstubAllGlobals());

  it('opens as a recorded run; opened again (a reload) it shows that run and brings back its traces, never a second copy', async () => {
    const r = rng(8);
    const run = recordedRun(r);
    const text = runFileText(run, batchOf(r), tracesOf(r, run.id));
    const load = vi.fn(async () => text);
    const first = (await openServedRunFile('runs/tight.json', load)).run!;
    expect(load).toHaveBeenCalledWith('runs/tight.json');
    expect(first.recorded).toEqual({ file: 'runs/tight.json', savedAt: JSON.parse(text).savedAt });
    expect(useInspection.getState().traces).toHaveLength(2);
    // The traces are not saved across a reload; the runs are.
    useInspection.setState({ traces: [] });
    useApp.getState().toggleRun(first.id);
    useApp.getState().viewRun(null);
    const again = (await openServedRunFile('runs/tight.json', load)).run!;
    const s = useApp.getState();
    expect(again.id).toBe(first.id);
    expect(s.runs).toHaveLength(1);
    expect(s.runs[0].visible).toBe(true);
    expect(s.batchRunId).toBe(first.id);
    expect(useInspection.getState().traces.map((t) => [t.runId, t.trace.iter])).toEqual([
      [first.id, 10],
      [first.id, 11],
    ]);
    // Still there: not pushed twice.
    await openServedRunFile('runs/tight.json', load);
    expect(useInspection.getState().traces).toHaveLength(2);
    // The file replaced on the site (another recording): a new run beside the old one.
    const newer = runFileText(run, batchOf(r), [], { savedAt: new Date('2026-12-01T00:00:00Z') });
    const replaced = (await openServedRunFile('runs/tight.json', async () => newer)).run!;
    expect(replaced.id).not.toBe(first.id);
    expect(useApp.getState().runs.map((x) => x.id)).toEqual([first.id, replaced.id]);
  });

  it('a missing or damaged served file is refused naming the path and why; the runs stay as they were', async () => {
    const r = rng(9);
    const run = recordedRun(r);
    await openServedRunFile('runs/good.json', async () => runFileText(run, null, []));
    const before = useApp.getState().runs;
    vi.stubGlobal(
      'fetch',
      vi.fn(async () => new Response('no such file', { status: 404 })),
    );
    const missing = await openServedRunFile('runs/nope.json');
    expect(missing.run).toBeNull();
    expect(missing.message).toContain('runs/nope.json');
    expect(missing.message).toContain('HTTP 404');
    expect(useApp.getState().runs).toBe(before);
    vi.stubGlobal(
      'fetch',
      vi.fn(async () => {
        throw new TypeError('Failed to fetch');
      }),
    );
    expect((await openServedRunFile('runs/nope.json')).message).toContain('Failed to fetch');
    const damaged = await openServedRunFile('runs/bad.json', async () => edited(runFileText(run, null, []), (d) => (d.version = 99)));
    expect(damaged.run).toBeNull();
    expect(damaged.message).toContain('runs/bad.json');
    expect(damaged.message).toContain('99');
    expect(useApp.getState().runs).toBe(before);
  });

  it('fetches from the page’s own site, refusing what is larger than a run file may be', async () => {
    const text = runFileText(recordedRun(rng(10)), null, []);
    const fetch = vi.fn(async () => new Response(text, { status: 200 }));
    vi.stubGlobal('fetch', fetch);
    expect(await fetchServedRunFile('runs/a.json')).toBe(text);
    expect(fetch).toHaveBeenCalledWith('runs/a.json', { credentials: 'same-origin' });
    vi.stubGlobal(
      'fetch',
      vi.fn(async () => new Response('{}', { status: 200, headers: { 'content-length': String(65 * 2 ** 20) } })),
    );
    await expect(fetchServedRunFile('runs/a.json')).rejects.toMatchObject({ reason: 'too-large' });
  });
});

/** A small trainer state of `config` after `iteration` iterations (random weights and moments). */
function trainerStateBytes(r: Rng, config: RunRecord['config'], iteration: number): Uint8Array {
  const modelConfig = { vocabSize: 24, nLayer: 1, nHead: 2, dModel: 32, maxSeq: 16, head: 'lm' as const };
  const model = (head: 'lm' | 'value') => {
    const n = paramLayout({ ...modelConfig, head }).total;
    return {
      params: Float64Array.from({ length: n }, () => r.normal()),
      m: Float64Array.from({ length: n }, () => r.normal()),
      v: Float64Array.from({ length: n }, () => r.next()),
      steps: 3,
    };
  };
  const task = getTask(config.task);
  return encodeTrainerState({
    task: config.task,
    alphabet: task.alphabet,
    config,
    modelConfig,
    iteration,
    klBeta: 0.05,
    actor: model('lm'),
    critic: model('value'),
    reference: Float32Array.from({ length: paramLayout(modelConfig).total }, () => r.normal()),
  });
}

describe('a run file with the trainer’s state', () => {
  it('carries the state byte for byte; a damaged state or one at another iteration is refused naming it', () => {
    const r = rng(11);
    const run = recordedRun(r);
    const bytes = trainerStateBytes(r, run.config, 12);
    const text = runFileText(run, null, [], { state: { iter: 12, bytes } });
    const read = readRunFile(text);
    expect(read.state?.iter).toBe(12);
    expect(read.state?.bytes).toEqual(bytes);
    expect(decodeTrainerState(read.state!.bytes).iteration).toBe(12);
    // A file without one reads as before.
    expect(readRunFile(runFileText(run, null, [])).state).toBeNull();
    expect(refusal(edited(text, (d) => (d.state.iter = 11))).field).toBe('state.iter');
    expect(refusal(edited(text, (d) => (d.state.base64 = `${d.state.base64.slice(0, 40)}!!!!`))).field).toBe('state.base64');
    const notAState = refusal(edited(text, (d) => (d.state.base64 = toBase64(new TextEncoder().encode('{"not":"safetensors"}')))));
    expect(notAState.field).toBe('state.base64');
    expect(refusal(edited(text, (d) => (d.state = { iter: 12 }))).field).toBe('state');
  });

  it('base64 both ways on every length, and only base64 is read', () => {
    const r = rng(12);
    for (const n of [0, 1, 2, 3, 4, 5, 0x8000 - 1, 0x8000, 0x8000 * 2 + 7]) {
      const bytes = Uint8Array.from({ length: n }, () => r.int(0, 256));
      expect(fromBase64(toBase64(bytes))).toEqual(bytes);
    }
    for (const bad of ['abc', 'ab=c', '====', 'a b=', 'ab\ncd==']) expect(fromBase64(bad), bad).toBeNull();
  });

  it('an opened file offers to continue from its state; the notice says which iteration', async () => {
    const { useRecordedStates } = await import('../../src/store/runFiles.ts');
    useApp.setState({ runs: [], batches: {}, activeRunId: null, viewRunId: null, notice: null });
    const r = rng(13);
    const run = recordedRun(r);
    const bytes = trainerStateBytes(r, run.config, 7);
    const text = runFileText(run, null, [], { state: { iter: 7, bytes } });
    const opened = (await openRunFile({ name: 'state.json', size: text.length, text: async () => text })).run!;
    expect(useRecordedStates.getState().states[opened.id]).toEqual({ iter: 7, bytes });
    expect(useApp.getState().notice?.text).toContain('the trainer’s state at iteration 7');
    const plain = runFileText(run, null, []);
    const other = (await openRunFile({ name: 'plain.json', size: plain.length, text: async () => plain })).run!;
    expect(useRecordedStates.getState().states[other.id]).toBeUndefined();
    expect(useApp.getState().notice?.text).toContain('It is not trained further here: its file holds no trainer state.');
  });
});

describe('a teacher’s question sets in a run file', () => {
  it('travel with the file, each for one of its inspected iterations, and arrive with the opened run', async () => {
    const { useClassQuestions } = await import('../../src/store/runFiles.ts');
    useApp.setState({ runs: [], batches: {}, activeRunId: null, viewRunId: null, notice: null });
    useInspection.setState({ traces: [] });
    const r = rng(14);
    const run = recordedRun(r);
    const traces = tracesOf(r, run.id); // iterations 10 and 11
    const text = runFileText(run, null, traces, { questions: [{ iter: 11, draw: 3 }] });
    expect(readRunFile(text).questions).toEqual([{ iter: 11, draw: 3 }]);
    expect(readRunFile(runFileText(run, null, traces)).questions).toEqual([]);
    const opened = (await openRunFile({ name: 'class.json', size: text.length, text: async () => text })).run!;
    expect(useClassQuestions.getState().byRun[opened.id]).toEqual([{ iter: 11, draw: 3 }]);
    expect(refusal(edited(text, (d) => (d.questions[0].iter = 12))).message).toContain('iteration 12 is not one of the file’s inspected iterations');
    expect(refusal(edited(text, (d) => d.questions.push({ iter: 11, draw: 1 }))).field).toBe('questions[1].iter');
    expect(refusal(edited(text, (d) => (d.questions[0].draw = -1))).field).toBe('questions[0].draw');
    expect(refusal(edited(text, (d) => (d.questions = { iter: 11 }))).field).toBe('questions');
  });
});

describe('a recorded run after a reload', () => {
  let env: { idb: MemoryIndexedDb; uninstall: () => void };
  const asFile = (name: string, text: string) => ({ name, size: text.length, text: async () => text });
  /** What a reload loses: everything held in memory only; the runs come back from the database. */
  const reload = () => {
    useInspection.setState({ traces: [] });
    useRecordedStates.setState({ states: {} });
    useClassQuestions.setState({ byRun: {} });
  };
  const kept = async () => (await withStores([RECORDED], 'readonly', (tx) => tx.objectStore(RECORDED).getAllKeys())).result.map(String).sort();

  beforeEach(() => {
    env = installMemoryIndexedDb();
    useApp.setState({ runs: [], batches: {}, activeRunId: null, viewRunId: null, notice: null });
    reload();
  });
  afterEach(() => env.uninstall());

  it('gets back its inspected iterations, its trainer state and its question sets from the file kept with it', async () => {
    const r = rng(21);
    const run = recordedRun(r);
    const state = { iter: 12, bytes: trainerStateBytes(r, run.config, 12) };
    const text = runFileText(run, null, tracesOf(r, run.id), { state, questions: [{ iter: 11, draw: 2 }] });
    const opened = (await openRunFile(asFile('class.json', text))).run!;
    const before = {
      traces: useInspection.getState().traces,
      state: useRecordedStates.getState().states[opened.id],
      questions: useClassQuestions.getState().byRun[opened.id],
    };
    expect(before.traces).toHaveLength(2);
    expect(await kept()).toEqual([opened.id]);

    reload();
    expect(useInspection.getState().traces).toEqual([]);
    await restoreRecordedRuns();
    expect(useInspection.getState().traces).toEqual(before.traces);
    expect(useRecordedStates.getState().states[opened.id]).toEqual(before.state);
    expect(useRecordedStates.getState().states[opened.id].bytes).toEqual(state.bytes);
    expect(useClassQuestions.getState().byRun[opened.id]).toEqual([{ iter: 11, draw: 2 }]);
  });

  it('forgets the file of a run deleted, of a run no longer saved, and a kept text that no longer reads', async () => {
    const r = rng(22);
    const a = (await openRunFile(asFile('a.json', runFileText(recordedRun(r), null, tracesOf(r, 'x'))))).run!;
    const b = (await openRunFile(asFile('b.json', runFileText(recordedRun(r), null, [])))).run!;
    expect(await kept()).toEqual([a.id, b.id].sort());
    useApp.getState().deleteRun(b.id);
    await vi.waitFor(async () => expect(await kept()).toEqual([a.id]));

    // Kept files of a run the page no longer has, and one damaged in storage.
    await withStores([RECORDED], 'readwrite', (tx) => {
      tx.objectStore(RECORDED).put({ runId: 'run-gone', text: '{}' });
      tx.objectStore(RECORDED).put({ runId: a.id, text: '{"format":"ppo-playground-run"' });
    });
    reload();
    await restoreRecordedRuns();
    expect(useInspection.getState().traces).toEqual([]);
    expect(useApp.getState().runs.map((x) => x.id)).toEqual([a.id]); // the run itself stays
    expect(await kept()).toEqual([]);
  });

  it("an older page's version-3 database keeps its runs and gains the recorded store", async () => {
    await new Promise<void>((resolve) => {
      const req = env.idb.open(DB_NAME, 3);
      req.onupgradeneeded = () => {
        for (const [name, keyPath] of [
          [RUNS, 'id'],
          [STATES, 'key'],
          [BATCHES, 'runId'],
          [SFT, 'task'],
        ])
          req.result.createObjectStore(name, { keyPath });
      };
      req.onsuccess = () => {
        const tx = req.result.transaction([RUNS], 'readwrite');
        tx.objectStore(RUNS).put({ id: 'run-old', config: DEFAULT_CONFIG });
        tx.oncomplete = () => resolve();
      };
    });
    const db = await openDb();
    expect(db.objectStoreNames.contains(RECORDED)).toBe(true);
    db.close();
    const runs = await withStores([RUNS], 'readonly', (tx) => tx.objectStore(RUNS).getAll());
    expect((runs.result as { id: string }[]).map((x) => x.id)).toEqual(['run-old']);
  });
});
