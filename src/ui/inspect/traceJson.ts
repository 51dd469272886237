// A captured trace as plain JSON and back: typed arrays become number arrays. Used by the test
// hook that puts a fixture trace into the page (testHook.ts); checked by checkTraceShapes on the way in.
import { checkTraceShapes, type IterationTrace, type MinibatchTrace } from '../../rl/inspect/index.ts';
import type { CapturedTrace } from '../../store/inspection.ts';

type Json<T> = T extends Float64Array | Int32Array ? number[] : T extends (infer U)[] ? Json<U>[] : T extends object ? { [K in keyof T]: Json<T[K]> } : T;
export type CapturedTraceJson = Json<CapturedTrace>;

/** A trace with its typed arrays as number arrays (JSON-safe, for page.evaluate). */
export function traceToJson(c: CapturedTrace): CapturedTraceJson {
  return JSON.parse(JSON.stringify(c, (_k, v) => (v instanceof Float64Array || v instanceof Int32Array ? Array.from(v) : v)));
}

const f64 = (x: number[] | null | undefined) => (x ? Float64Array.from(x) : null);
const i32 = (x: number[]) => Int32Array.from(x);

/** The trace back with typed arrays; throws on a shape mismatch (checkTraceShapes). */
export function traceFromJson(j: CapturedTraceJson): CapturedTrace {
  const t = j.trace;
  const trace: IterationTrace = {
    ...t,
    responseTokens: i32(t.responseTokens),
    promptTokens: t.promptTokens ? i32(t.promptTokens) : null,
    promptMask: f64(t.promptMask),
    actionMask: f64(t.actionMask)!,
    group: i32(t.group),
    scores: f64(t.scores)!,
    baselines: f64(t.baselines),
    rolloutLogprobs: f64(t.rolloutLogprobs),
    oldLogprobs: f64(t.oldLogprobs)!,
    refLogprobs: f64(t.refLogprobs)!,
    values: f64(t.values)!,
    stored: {
      kl: f64(t.stored.kl)!,
      rewards: f64(t.stored.rewards)!,
      advantages: f64(t.stored.advantages)!,
      returns: f64(t.stored.returns)!,
      tisWeights: f64(t.stored.tisWeights),
      rsMask: f64(t.stored.rsMask ?? null),
    },
    minibatches: t.minibatches.map((m): MinibatchTrace => ({ ...m, rows: i32(m.rows), newLogprobs: f64(m.newLogprobs)!, newValues: f64(m.newValues), stored: m.stored })),
  };
  checkTraceShapes(trace);
  return { runId: j.runId, trace, prompts: [...j.prompts], tokenText: [...j.tokenText] };
}
