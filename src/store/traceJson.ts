// A captured trace as plain JSON and back: typed arrays become number arrays. Used by run files
// (runFile.ts) and the test hook that puts a fixture trace into the page (ui/inspect/testHook.ts);
// checked by checkTraceShapes on the way in.
import { checkTraceShapes, type IterationTrace, type MinibatchTrace } from '../rl/inspect/index.ts';
import type { CapturedTrace } from './inspection.ts';

type Json<T> = T extends Float64Array | Int32Array ? number[] : T extends (infer U)[] ? Json<U>[] : T extends object ? { [K in keyof T]: Json<T[K]> } : T;
export type CapturedTraceJson = Json<CapturedTrace>;

/** A trace with its typed arrays as number arrays (JSON-safe, for page.evaluate). */
export function traceToJson(c: CapturedTrace): CapturedTraceJson {
  return JSON.parse(JSON.stringify(c, (_k, v) => (v instanceof Float64Array || v instanceof Int32Array ? Array.from(v) : v)));
}

/** A required array of the trace: a list, or an error naming the field. */
function list(x: number[] | null | undefined, field: string): number[] {
  if (!Array.isArray(x)) throw new Error(`iteration trace: ${field} is missing`);
  return x;
}
const f64 = (x: number[] | null | undefined, field: string) => Float64Array.from(list(x, field));
const i32 = (x: number[] | null | undefined, field: string) => Int32Array.from(list(x, field));
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
  return { runId: j.runId, trace, prompts: [...j.prompts], tokenText: [...j.tokenText] };
}
