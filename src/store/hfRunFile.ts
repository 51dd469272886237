// A LoRA run of the visitor's own model as one file: the model it was trained on (named, not
// included: a base model stays on the visitor's disk), the settings, the trainer's rows (every
// response of each batch with its tokens' numbers, by column: hfRunRows.ts), the held-out
// evaluations, the last iteration as the inspector reads it (when the page had it), and the
// adapter as PEFT's two files with the run's training state (AdamW moments, a GAE run's critic:
// model/hf/trainingState.ts), so "Continue training" on the same model goes on exactly. Read back through checks that name the field they refuse; the adapter's fit to a
// model is checked by the worker when it is put on one, as a picked adapter is.
import { decodeSafetensors } from '../model/safetensors.ts';
import {
  HF_TRAIN_ESTIMATORS,
  HF_TRAIN_RANGES,
  HF_TRAIN_REWARDS,
  type HfTrainEval,
  type HfTrainNumber,
  type HfTrainRow,
  type HfTrainSettings,
  hfTrainProblems,
} from '../rl/hf/hfTrainSettings.ts';
import type { HfModelSummary } from '../worker/hfTypes.ts';
import { count, damaged, date, fromBase64, isObject, list, num, RUN_FILE_FORMATS, readRunDocument, shown, str, toBase64 } from './fileChecks.ts';
import { readRows, rowColumns } from './hfRunRows.ts';
import type { CapturedTrace } from './inspection.ts';
import { readTraceJson, traceToJson } from './traceJson.ts';

/** Bumped when a field changes meaning: the version written, and those read (others are refused by name). */
export const HF_RUN_FILE_VERSION = 2;
export const HF_RUN_FILE_VERSIONS_READ = [1, 2] as const;
/** The largest file read: a Qwen3-0.6B adapter of rank 64 with its moments is ~0.4 GiB, beyond a page's reach anyway. */
export const HF_RUN_FILE_MAX_BYTES = 256 * 1024 * 1024;

/** The model a run was trained on, as the page names it: a file is put back only on a model like it. */
export type HfRunModel = Pick<HfModelSummary, 'label' | 'architecture' | 'nLayer' | 'dModel' | 'vocab'>;

/** A run of the visitor's own model, as a file holds it. */
export interface HfRecordedRun {
  savedAt: string;
  model: HfRunModel;
  settings: HfTrainSettings;
  /** The iteration the adapter was trained to (a continued run counts on from it). */
  iterations: number;
  rows: HfTrainRow[];
  evals: HfTrainEval[];
  /** PEFT's adapter_config.json text and adapter_model.safetensors, and the run's training state. */
  adapter: { config: string; weights: Uint8Array; state?: Uint8Array };
  /** The last iteration's trace for the Inspect tab (iteration `iterations`); absent when the page had none. */
  lastTrace?: HfRunTrace;
}

/** A trace as a run file keeps it: its prompts and token text beside it, the file's model naming it. */
export type HfRunTrace = Omit<CapturedTrace, 'runId' | 'model'>;

const MODEL_NUMBERS = ['nLayer', 'dModel', 'vocab'] as const;

/** The model's identity a file keeps. */
export const runModelOf = (m: HfModelSummary): HfRunModel => ({ label: m.label, architecture: m.architecture, nLayer: m.nLayer, dModel: m.dModel, vocab: m.vocab });

/** Why `run` does not go on `model` (its name, architecture or shape differ), or null when it does. */
export function otherModel(run: HfRunModel, model: HfModelSummary): string | null {
  const differs = (['label', 'architecture', ...MODEL_NUMBERS] as const).filter((k) => run[k] !== model[k]);
  return differs.length === 0 ? null : differs.map((k) => `${k} ${shown(run[k])} ≠ ${shown(model[k])}`).join(', ');
}

export function hfRunFileText(run: HfRecordedRun): string {
  const { config, weights, state } = run.adapter;
  return JSON.stringify({
    format: RUN_FILE_FORMATS.ownModel,
    version: HF_RUN_FILE_VERSION,
    savedAt: run.savedAt,
    model: run.model,
    settings: run.settings,
    iterations: run.iterations,
    rows: run.rows.map(rowColumns),
    evals: run.evals,
    adapter: { config, weights: toBase64(weights), ...(state ? { state: toBase64(state) } : {}) },
    ...(run.lastTrace ? { lastTrace: runTraceJson(run.lastTrace) } : {}),
  });
}

/** A run's trace as JSON (a file's `lastTrace`, the kept adapter's record). */
export function runTraceJson(t: HfRunTrace) {
  const { runId: _r, model: _m, ...fields } = traceToJson({ ...t, runId: '' });
  return fields;
}

/** A run's trace read back from `field` through the run file's checks; it must be of iteration `iterations`, the run's last. */
export function readRunTrace(x: unknown, field: string, iterations: number): HfRunTrace {
  const { model: _m, ...t } = readTraceJson(x, field);
  if (t.trace.iter !== iterations) throw damaged(`${field}.trace.iter`, `${t.trace.iter} is not the run's last iteration (${iterations})`);
  return t;
}

function readModel(x: unknown): HfRunModel {
  if (!isObject(x)) throw damaged('model', `expected the model's name and shape, found ${shown(x)}`);
  const model: HfRunModel = { label: str(x.label, 'model.label', 200), architecture: str(x.architecture, 'model.architecture', 200), nLayer: 0, dModel: 0, vocab: 0 };
  for (const k of MODEL_NUMBERS) model[k] = count(x[k], `model.${k}`);
  return model;
}

/** The settings, each in the panel's range (the rules that need the model are checked when it trains). */
export function readSettings(x: unknown): HfTrainSettings {
  if (!isObject(x)) throw damaged('settings', `expected the run's settings, found ${shown(x)}`);
  const oneOf = <T extends string>(v: unknown, allowed: readonly T[], field: string): T => {
    if (!allowed.includes(v as T)) throw damaged(field, `expected one of ${allowed.join(', ')}, found ${shown(v)}`);
    return v as T;
  };
  if (typeof x.chat !== 'boolean') throw damaged('settings.chat', `expected true or false, found ${shown(x.chat)}`);
  const s = {
    reward: oneOf(x.reward, HF_TRAIN_REWARDS, 'settings.reward'),
    prompts: str(x.prompts, 'settings.prompts', 100_000),
    chat: x.chat,
    estimator: oneOf(x.estimator, HF_TRAIN_ESTIMATORS, 'settings.estimator'),
  } as HfTrainSettings;
  for (const k of Object.keys(HF_TRAIN_RANGES) as HfTrainNumber[]) s[k] = num(x[k], `settings.${k}`);
  const problem = hfTrainProblems(s, { maxPositions: Number.POSITIVE_INFINITY, hasChatTemplate: true })[0];
  if (problem) throw damaged(`settings.${problem.field}`, `${shown(s[problem.field as keyof HfTrainSettings])}: ${problem.range} is expected`);
  return s;
}

function readEvals(x: unknown): HfTrainEval[] {
  const seen = new Set<string>();
  return list(x, 'evals').map((e, i) => {
    const f = `evals[${i}]`;
    if (!isObject(e) || (e.when !== 'before' && e.when !== 'after')) throw damaged(f, 'expected { when: "before" or "after", greedyAccuracy, count }');
    if (seen.has(e.when)) throw damaged(`${f}.when`, `a second "${e.when}" evaluation`);
    seen.add(e.when);
    const fraction = (v: unknown, field: string) => {
      const x = num(v, field);
      if (x < 0 || x > 1) throw damaged(field, `${x} is not a fraction from 0 to 1`);
      return x;
    };
    const greedyAccuracy = fraction(e.greedyAccuracy, `${f}.greedyAccuracy`);
    const out: HfTrainEval = { when: e.when, greedyAccuracy, count: count(e.count, `${f}.count`) };
    if (e.sampled !== undefined) {
      if (!isObject(e.sampled)) throw damaged(`${f}.sampled`, 'expected { accuracy, samples }');
      out.sampled = { accuracy: fraction(e.sampled.accuracy, `${f}.sampled.accuracy`), samples: count(e.sampled.samples, `${f}.sampled.samples`) };
    }
    return out;
  });
}

/** Base64 bytes at `field` that decode as a safetensors file. */
function safetensorsBytes(x: unknown, field: string): Uint8Array {
  const bytes = typeof x === 'string' ? fromBase64(x) : null;
  if (bytes === null) throw damaged(field, `expected the file's bytes as base64, found ${shown(x)}`);
  try {
    decodeSafetensors(bytes);
  } catch (e) {
    throw damaged(field, e instanceof Error ? e.message : String(e));
  }
  return bytes;
}

function readAdapter(x: unknown): HfRecordedRun['adapter'] {
  if (!isObject(x)) throw damaged('adapter', `expected { config, weights, state }, found ${shown(x)}`);
  const config = str(x.config, 'adapter.config', 100_000);
  let parsed: unknown;
  try {
    parsed = JSON.parse(config);
  } catch {
    parsed = null;
  }
  if (!isObject(parsed)) throw damaged('adapter.config', 'not the JSON object of an adapter_config.json');
  const weights = safetensorsBytes(x.weights, 'adapter.weights');
  return { config, weights, ...(x.state !== undefined ? { state: safetensorsBytes(x.state, 'adapter.state') } : {}) };
}

/** The run in `text`, or a RunFileError naming why it is refused. */
export function readHfRunFile(text: string): HfRecordedRun {
  const doc = readRunDocument(text, 'ownModel', HF_RUN_FILE_VERSIONS_READ, HF_RUN_FILE_MAX_BYTES);
  const iterations = count(doc.iterations, 'iterations');
  return {
    savedAt: date(doc.savedAt, 'savedAt'),
    model: readModel(doc.model),
    settings: readSettings(doc.settings),
    iterations,
    rows: readRows(doc.rows, iterations, doc.version as (typeof HF_RUN_FILE_VERSIONS_READ)[number]),
    evals: readEvals(doc.evals),
    adapter: readAdapter(doc.adapter),
    ...(doc.lastTrace !== undefined ? { lastTrace: readRunTrace(doc.lastTrace, 'lastTrace', iterations) } : {}),
  };
}
