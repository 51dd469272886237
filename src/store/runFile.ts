// A run as one file: its config, every metric, the held-out evaluations, its latest batch (the
// samples and ratios the teaching views show), the iterations the inspector captured, with their
// full token tables, and, when the page had one, the trainer's saved state (every weight and
// optimiser moment: "Continue training" goes on from it). Written as JSON with a format name and version; read back through checks that
// refuse a file of another format or version, or a damaged one, naming what is wrong. Nothing of
// the page changes until a file has passed every check (the caller adds it as a new run).
import { checkConfig } from '../rl/config.ts';
import { decodeTrainerState } from '../rl/trainerState.ts';
import { isMetricName, type MetricValues } from '../rl/metricNames.ts';
import type { SampleRow, SampleToken } from '../rl/samples.ts';
import type { BatchRatios, BatchSamples, RunBatch } from './batches.ts';
import type { CapturedTrace } from './inspection.ts';
import type { EvalPoint, MetricPoint, RunRecord } from './runs.ts';
import { count, damaged, date, fromBase64, isCount, isObject, list, num, RUN_FILE_FORMATS, readRunDocument, shown, str, toBase64 } from './fileChecks.ts';
import { type CapturedTraceJson, readTraceJson, traceToJson } from './traceJson.ts';

export const RUN_FILE_FORMAT = RUN_FILE_FORMATS.playground;
/** Bumped when a field changes meaning; a file of another version is refused by name. */
export const RUN_FILE_VERSION = 1;
/** The largest file read; a file the page writes stays far below it (docs/page.md gives sizes). */
export const RUN_FILE_MAX_BYTES = 64 * 1024 * 1024;

/** What a run file holds once read: the run as it was recorded, its batch and its traces. */
export interface RecordedRun {
  /** The run's record; its id, colour and comparison are the page's to give when it is opened. */
  run: Omit<RunRecord, 'id' | 'color' | 'visible' | 'comparison'>;
  batch: RunBatch | null;
  /** Traces of the run's inspected iterations, oldest first (runId is the page's to give). */
  traces: Omit<CapturedTrace, 'runId'>[];
  /** When the file was written (ISO 8601). */
  savedAt: string;
  /** The trainer's state after `iter` iterations (trainerState.ts bytes), or null when the file has none. */
  state: RecordedState | null;
  /** The teacher's question sets, each for one of the traces' iterations. */
  questions: ClassQuestions[];
}

/** What a run file may hold besides the run, its batch and traces. */
export interface RunFileExtras {
  /** When it is written (default: now). */
  savedAt?: Date;
  state?: RecordedState | null;
  /** A teacher's question sets, one per inspected iteration at most. */
  questions?: readonly ClassQuestions[];
}

/**
 * The questions a teacher chose for a class on inspected iteration `iter`: the draw of Check
 * yourself's questionsFor (rl/inspect/questions.ts) the teacher settled on.
 */
export interface ClassQuestions {
  iter: number;
  draw: number;
}

/** A trainer state kept in a run file: training goes on with iteration `iter`. */
export interface RecordedState {
  iter: number;
  bytes: Uint8Array;
}

interface RunFileJson {
  format: typeof RUN_FILE_FORMAT;
  version: typeof RUN_FILE_VERSION;
  savedAt: string;
  run: RecordedRun['run'];
  batch: RunBatch | null;
  traces: Omit<CapturedTraceJson, 'runId'>[];
  /** Absent in files written without a state. */
  state?: { iter: number; base64: string } | null;
  /** Absent when no question set was chosen. */
  questions?: ClassQuestions[];
}

/** The file's text for `run` with its batch, traces (those of other runs are left out) and trainer state. */
export function runFileText(run: RunRecord, batch: RunBatch | null | undefined, traces: readonly CapturedTrace[], extras: RunFileExtras = {}): string {
  const { savedAt = new Date(), state = null, questions = [] } = extras;
  const { id: _id, color: _color, visible: _visible, comparison: _comparison, ...record } = run;
  const doc: RunFileJson = {
    format: RUN_FILE_FORMAT,
    version: RUN_FILE_VERSION,
    savedAt: savedAt.toISOString(),
    run: record,
    batch: batch ?? null,
    traces: traces
      .filter((t) => t.runId === run.id)
      .map((t) => {
        const { runId: _r, ...rest } = traceToJson(t);
        return rest;
      }),
    ...(state ? { state: { iter: state.iter, base64: toBase64(state.bytes) } } : {}),
    ...(questions.length > 0 ? { questions: questions.map(({ iter, draw }) => ({ iter, draw })) } : {}),
  };
  return JSON.stringify(doc);
}

function readMetrics(x: unknown): MetricPoint[] {
  return list(x, 'run.metrics').map((p, i) => {
    const f = `run.metrics[${i}]`;
    if (!isObject(p) || !isCount(p.iter) || !isObject(p.values)) throw damaged(f, 'expected { iter, values }');
    const values: MetricValues = {};
    for (const [k, v] of Object.entries(p.values)) {
      if (!isMetricName(k)) throw damaged(`${f}.values`, `${shown(k)} is not a metric this page knows`);
      values[k] = num(v, `${f}.values.${k}`);
    }
    return { iter: p.iter, values };
  });
}

function readEvals(x: unknown): EvalPoint[] {
  return list(x, 'run.evals').map((p, i) => {
    const f = `run.evals[${i}]`;
    if (!isObject(p) || !isCount(p.iter) || !isObject(p.values)) throw damaged(f, 'expected { iter, values }');
    const values = Object.fromEntries(Object.entries(p.values).map(([k, v]) => [str(k, `${f}.values`, 100), num(v, `${f}.values.${k}`)]));
    return {
      iter: p.iter,
      values,
      ...(p.prompts !== undefined ? { prompts: count(p.prompts, `${f}.prompts`) } : {}),
      ...(p.seconds !== undefined ? { seconds: num(p.seconds, `${f}.seconds`) } : {}),
    };
  });
}

const TOKEN_NUMBERS = ['advantage', 'kl', 'ratio', 'value'] as const;
const TOKEN_OPTIONAL_NUMBERS = ['reward', 'return', 'rolloutLogprob', 'oldLogprob', 'newLogprob', 'refLogprob'] as const;

function readToken(x: unknown, f: string): SampleToken {
  if (!isObject(x)) throw damaged(f, 'expected a token');
  const t: SampleToken = { text: str(x.text, `${f}.text`, 200), advantage: 0, kl: 0, ratio: 0, value: 0 };
  for (const k of TOKEN_NUMBERS) t[k] = num(x[k], `${f}.${k}`);
  for (const k of TOKEN_OPTIONAL_NUMBERS) if (x[k] !== undefined) t[k] = num(x[k], `${f}.${k}`);
  for (const k of ['covPicked', 'rejected'] as const) {
    if (x[k] === undefined) continue;
    if (typeof x[k] !== 'boolean') throw damaged(`${f}.${k}`, `expected true or false, found ${shown(x[k])}`);
    t[k] = x[k];
  }
  return t;
}

function readSamples(x: unknown): BatchSamples | null {
  if (x === null || x === undefined) return null;
  if (!isObject(x) || !isCount(x.iter)) throw damaged('batch.samples', 'expected { iter, rows }');
  const rows = list(x.rows, 'batch.samples.rows').map((r, i): SampleRow => {
    const f = `batch.samples.rows[${i}]`;
    if (!isObject(r) || typeof r.endedWithEos !== 'boolean') throw damaged(f, 'expected a sample row');
    return {
      prompt: str(r.prompt, `${f}.prompt`),
      response: str(r.response, `${f}.response`),
      reward: num(r.reward, `${f}.reward`),
      endedWithEos: r.endedWithEos,
      tokens: list(r.tokens, `${f}.tokens`).map((t, j) => readToken(t, `${f}.tokens[${j}]`)),
    };
  });
  return { iter: x.iter, rows };
}

function readRatios(x: unknown): BatchRatios | null {
  if (x === null || x === undefined) return null;
  if (!isObject(x) || !isCount(x.iter) || !isObject(x.clip)) throw damaged('batch.ratios', 'expected { iter, ratios, advantages, clip }');
  const nums = (y: unknown, f: string) => list(y, f).map((v, i) => num(v, `${f}[${i}]`));
  const ratios = nums(x.ratios, 'batch.ratios.ratios');
  const advantages = nums(x.advantages, 'batch.ratios.advantages');
  if (ratios.length !== advantages.length) throw damaged('batch.ratios', `${ratios.length} ratios but ${advantages.length} advantages`);
  const seqRatios = x.seqRatios === undefined ? undefined : nums(x.seqRatios, 'batch.ratios.seqRatios');
  const seqAdvantages = x.seqAdvantages === undefined ? undefined : nums(x.seqAdvantages, 'batch.ratios.seqAdvantages');
  const c = x.clip;
  const clip = {
    clipLow: num(c.clipLow, 'batch.ratios.clip.clipLow'),
    clipHigh: num(c.clipHigh, 'batch.ratios.clip.clipHigh'),
    dualClip: c.dualClip === null ? null : num(c.dualClip, 'batch.ratios.clip.dualClip'),
  };
  return { iter: x.iter, ratios, advantages, ...(seqRatios ? { seqRatios } : {}), ...(seqAdvantages ? { seqAdvantages } : {}), clip };
}

/** The run in `text`, or a RunFileError naming why it is refused. */
export function readRunFile(text: string): RecordedRun {
  const doc = readRunDocument(text, 'playground', [RUN_FILE_VERSION], RUN_FILE_MAX_BYTES);
  const savedAt = date(doc.savedAt, 'savedAt');
  const r = doc.run;
  if (!isObject(r)) throw damaged('run', 'missing');
  if (!isObject(r.config)) throw damaged('run.config', `expected the run's settings, found ${shown(r.config)}`);
  const checked = checkConfig(r.config);
  if (!checked.config) {
    const said = checked.problems.slice(0, 2).map((p) => p.message);
    if (checked.problems.length > 2) said.push(`and ${checked.problems.length - 2} more`);
    throw damaged('run.config', said.join('; '));
  }
  if (r.backend !== 'webgpu' && r.backend !== 'cpu') throw damaged('run.backend', `expected "webgpu" or "cpu", found ${shown(r.backend)}`);
  const backends =
    r.backends === undefined
      ? undefined
      : list(r.backends, 'run.backends').map((b, i) => {
          if (!isObject(b) || !isCount(b.fromIter) || (b.backend !== 'webgpu' && b.backend !== 'cpu')) throw damaged(`run.backends[${i}]`, 'expected { fromIter, backend }');
          return { fromIter: b.fromIter, backend: b.backend as 'webgpu' | 'cpu' };
        });
  const run: RecordedRun['run'] = {
    name: str(r.name, 'run.name', 200),
    config: checked.config,
    backend: r.backend,
    ...(backends ? { backends } : {}),
    createdAt: num(r.createdAt, 'run.createdAt'),
    metrics: readMetrics(r.metrics),
    ...(r.evals !== undefined ? { evals: readEvals(r.evals) } : {}),
    ...(r.budget !== undefined ? { budget: count(r.budget, 'run.budget') } : {}),
    ...(r.preset !== undefined ? { preset: str(r.preset, 'run.preset', 200) } : {}),
  };
  let batch: RunBatch | null = null;
  if (doc.batch !== null && doc.batch !== undefined) {
    if (!isObject(doc.batch)) throw damaged('batch', `expected { samples, ratios }, found ${shown(doc.batch)}`);
    batch = { samples: readSamples(doc.batch.samples), ratios: readRatios(doc.batch.ratios) };
  }
  const traces = doc.traces === undefined ? [] : list(doc.traces, 'traces').map((x, i) => readTraceJson(x, `traces[${i}]`));
  return { run, batch, traces, savedAt, state: readState(doc.state), questions: readQuestions(doc.questions, traces) };
}

/** The question sets: each names an inspected iteration of the file, once, and a draw. */
function readQuestions(x: unknown, traces: readonly Omit<CapturedTrace, 'runId'>[]): ClassQuestions[] {
  if (x === undefined || x === null) return [];
  const iters = new Set(traces.map((t) => t.trace.iter));
  const seen = new Set<number>();
  return list(x, 'questions').map((q, i) => {
    const f = `questions[${i}]`;
    if (!isObject(q)) throw damaged(f, 'expected { iter, draw }');
    const iter = count(q.iter, `${f}.iter`);
    const draw = count(q.draw, `${f}.draw`);
    if (!iters.has(iter)) throw damaged(`${f}.iter`, `iteration ${iter} is not one of the file’s inspected iterations`);
    if (seen.has(iter)) throw damaged(`${f}.iter`, `a second set for iteration ${iter}`);
    seen.add(iter);
    return { iter, draw };
  });
}

/** The trainer state of a file: decoded and checked as the worker will check it, its iteration matching. */
function readState(x: unknown): RecordedState | null {
  if (x === null || x === undefined) return null;
  if (!isObject(x) || typeof x.base64 !== 'string') throw damaged('state', 'expected { iter, base64 }');
  const iter = count(x.iter, 'state.iter');
  const bytes = fromBase64(x.base64);
  if (bytes === null) throw damaged('state.base64', 'not base64');
  let decoded: ReturnType<typeof decodeTrainerState>;
  try {
    decoded = decodeTrainerState(bytes);
  } catch (e) {
    throw damaged('state.base64', e instanceof Error ? e.message : String(e));
  }
  if (decoded.iteration !== iter) throw damaged('state.iter', `${iter}, but the state is at iteration ${decoded.iteration}`);
  return { iter, bytes };
}
