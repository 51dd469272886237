// A captured trace as plain JSON and back: typed arrays become number arrays. Used by run files
// (runFile.ts, hfRunFile.ts: read through readTraceJson's checks, which name the field they
// refuse) and the test hook that puts a fixture trace into the page (ui/inspect/testHook.ts);
// checked by checkTraceShapes on the way in.
import { checkTraceShapes, type IterationTrace, type MinibatchTrace, recomputeTrace } from '../rl/inspect/index.ts';
import { DEFAULT_CONFIG } from '../rl/configKnobs.ts';
import { validateConfig } from '../rl/configValidate.ts';
import { damaged, isCount, isObject, list as fileList, num, shown, str } from './fileChecks.ts';
import type { CapturedTrace } from './inspection.ts';

type Json<T> = T extends Float64Array | Int32Array ? number[] : T extends (infer U)[] ? Json<U>[] : T extends object ? { [K in keyof T]: Json<T[K]> } : T;
export type CapturedTraceJson = Json<CapturedTrace>;

/** A trace with its typed arrays as number arrays (JSON-safe, for page.evaluate). */
export function traceToJson(c: CapturedTrace): CapturedTraceJson {
  return JSON.parse(JSON.stringify(c, (_k, v) => (v instanceof Float64Array || v instanceof Int32Array ? Array.from(v) : v)));
}

/** A required array of the trace: a list, or an error naming the field. */
function numbers(x: number[] | null | undefined, field: string): number[] {
  if (!Array.isArray(x)) throw new Error(`iteration trace: ${field} is missing`);
  return x;
}
const f64 = (x: number[] | null | undefined, field: string) => Float64Array.from(numbers(x, field));
const i32 = (x: number[] | null | undefined, field: string) => Int32Array.from(numbers(x, field));
/** A field that may be null (not kept) or absent (traces made before it): kept as it was. */
const maybe = <T>(x: number[] | null | undefined, to: (x: number[]) => T): T | null | undefined => (x === undefined ? undefined : x === null ? null : to(x));
const f64OrNull = (x: number[] | null | undefined, field: string) => maybe(x, (y) => f64(y, field)) ?? null;

/** The trace back with typed arrays; throws on a missing array or a shape mismatch (checkTraceShapes). */
export function traceFromJson(j: CapturedTraceJson): CapturedTrace {
  const t = j.trace;
  const s = t.stored;
  const trace: IterationTrace = {
    ...t,
    responseTokens: i32(t.responseTokens, 'responseTokens'),
    promptTokens: maybe(t.promptTokens, (x) => i32(x, 'promptTokens')),
    promptMask: maybe(t.promptMask, (x) => f64(x, 'promptMask')),
    actionMask: f64(t.actionMask, 'actionMask'),
    group: i32(t.group, 'group'),
    scores: f64(t.scores, 'scores'),
    baselines: maybe(t.baselines, (x) => f64(x, 'baselines')),
    rolloutLogprobs: f64OrNull(t.rolloutLogprobs, 'rolloutLogprobs'),
    oldLogprobs: f64(t.oldLogprobs, 'oldLogprobs'),
    refLogprobs: f64(t.refLogprobs, 'refLogprobs'),
    values: f64(t.values, 'values'),
    stored: {
      kl: f64(s.kl, 'stored.kl'),
      rewards: f64(s.rewards, 'stored.rewards'),
      advantages: f64(s.advantages, 'stored.advantages'),
      returns: f64(s.returns, 'stored.returns'),
      tisWeights: f64OrNull(s.tisWeights, 'stored.tisWeights'),
      rsMask: maybe(s.rsMask, (x) => f64(x, 'stored.rsMask')),
    },
    minibatches: t.minibatches.map(
      (m, k): MinibatchTrace => ({
        ...m,
        rows: i32(m.rows, `minibatches[${k}].rows`),
        newLogprobs: f64(m.newLogprobs, `minibatches[${k}].newLogprobs`),
        newValues: f64OrNull(m.newValues, `minibatches[${k}].newValues`),
        stored: m.stored,
      }),
    ),
  };
  checkTraceShapes(trace);
  const eos = j.endedWithEos;
  if (eos !== undefined && eos.length !== trace.B) throw new Error(`iteration trace: endedWithEos has ${eos.length} values, expected ${trace.B}`);
  return { runId: j.runId, trace, prompts: [...j.prompts], tokenText: [...j.tokenText], ...(eos ? { endedWithEos: [...eos] } : {}) };
}

/**
 * Every leaf of a trace is a finite number, text or true/false; null only stands for a whole
 * absent field (JSON writes NaN as null, which a typed array would read as 0: refused in a list).
 */
function checkLeaves(x: unknown, f: string, inList = false): void {
  if ((x === null && !inList) || typeof x === 'string' || typeof x === 'boolean') return;
  if (typeof x === 'number') {
    num(x, f);
    return;
  }
  if (x === null) throw damaged(f, 'expected a finite number, found null');
  if (Array.isArray(x)) for (const [i, v] of x.entries()) checkLeaves(v, `${f}[${i}]`, true);
  else if (isObject(x)) for (const [k, v] of Object.entries(x)) checkLeaves(v, `${f}.${k}`);
  else throw damaged(f, `unexpected ${shown(x)}`);
}

/**
 * The trace's objects where the reader expects them (knobs, stored, each update step), and each
 * knob a playground setting has in that setting's range, so a damaged file is refused naming the
 * field rather than failing inside the recomputation.
 */
function checkStructure(t: Record<string, unknown>, f: string): void {
  const k = t.knobs;
  if (!isObject(k)) throw damaged(`${f}.knobs`, `expected the iteration's settings, found ${shown(k)}`);
  if (typeof k.whiten !== 'boolean') throw damaged(`${f}.knobs.whiten`, `expected true or false, found ${shown(k.whiten)}`);
  const settings = Object.keys(k).filter((key) => key in DEFAULT_CONFIG);
  const problem = validateConfig({ ...DEFAULT_CONFIG, ...Object.fromEntries(settings.map((key) => [key, k[key]])) }).find((p) => settings.includes(p.field));
  if (problem) throw damaged(`${f}.knobs.${problem.field}`, problem.message);
  if (!isObject(t.stored)) throw damaged(`${f}.stored`, `expected the experience's stored tensors, found ${shown(t.stored)}`);
  fileList(t.minibatches, `${f}.minibatches`).forEach((m, i) => {
    if (!isObject(m)) throw damaged(`${f}.minibatches[${i}]`, `expected one update step, found ${shown(m)}`);
  });
}

/**
 * A trace a file holds at `f` (its prompts and token text beside it), checked leaf by leaf and
 * recomputed once; a RunFileError names the field it refuses.
 */
export function readTraceJson(x: unknown, f: string): Omit<CapturedTrace, 'runId'> {
  if (!isObject(x) || !isObject(x.trace)) throw damaged(f, 'expected { trace, prompts, tokenText, endedWithEos? }');
  checkLeaves(x.trace, `${f}.trace`);
  const t = x.trace;
  if (!isCount(t.B) || !isCount(t.A) || t.B === 0 || t.A === 0 || !isCount(t.iter)) throw damaged(`${f}.trace`, 'B, A and iter must be counts');
  const prompts = fileList(x.prompts, `${f}.prompts`).map((p, j) => str(p, `${f}.prompts[${j}]`));
  const tokenText = fileList(x.tokenText, `${f}.tokenText`).map((p, j) => str(p, `${f}.tokenText[${j}]`, 200));
  if (prompts.length !== t.B || tokenText.length !== t.B * t.A) throw damaged(f, `prompts and tokenText must hold B = ${t.B} and B·A = ${t.B * t.A} entries`);
  if (x.endedWithEos !== undefined) {
    const eos = fileList(x.endedWithEos, `${f}.endedWithEos`);
    if (eos.length !== t.B) throw damaged(`${f}.endedWithEos`, `expected B = ${t.B} entries, found ${eos.length}`);
    eos.forEach((v, j) => {
      if (typeof v !== 'boolean') throw damaged(`${f}.endedWithEos[${j}]`, `expected true or false, found ${shown(v)}`);
    });
  }
  checkStructure(t, `${f}.trace`);
  let captured: CapturedTrace;
  try {
    captured = traceFromJson({ ...(x as unknown as CapturedTraceJson), runId: '' });
    // The inspector recomputes every stage from these tensors: a trace it cannot read is refused here, not in the view.
    const rec = recomputeTrace(captured.trace);
    if (!rec.advantages.every(Number.isFinite) || !rec.minibatches.every((m) => m.tokenLoss.every(Number.isFinite)))
      throw new Error('its advantages or losses recompute to non-finite numbers');
  } catch (e) {
    throw damaged(`${f}.trace`, e instanceof Error ? e.message : String(e));
  }
  const { runId: _r, ...rest } = captured;
  return rest;
}
