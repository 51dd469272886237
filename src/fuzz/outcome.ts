// What one fuzz input did, and the rule that sorts it: a valid result, a named error (an Error
// whose message says what was wrong), or a defect (an engine error such as a TypeError, a throw
// of a non-Error, an invalid "valid" result, a hang past the time limit).

export type Verdict = 'ok' | 'named' | 'crash' | 'invalid' | 'hang';

export interface CaseResult {
  verdict: Verdict;
  /** For defects: what went wrong, with enough of the input to reproduce it. */
  detail?: string;
}

/** Errors the JS engine raises on a programming mistake, never on purpose for bad input. */
const ENGINE_ERRORS = [TypeError, RangeError, ReferenceError, SyntaxError, EvalError, URIError];
/** A message that only an unguarded access produces. */
const ENGINE_MESSAGE = /Cannot read propert|is not a function|is not iterable|undefined is not|Invalid array length|Maximum call stack|out of memory/i;

/** Messages longer than this are not "clear": a 10 kB value must not be echoed whole. */
export const MAX_MESSAGE_CHARS = 600;

/** Sorts a thrown value: named error or crash. `mustName` lists words the message must contain (any of). */
export function classifyThrow(e: unknown, mustName: readonly string[] = []): CaseResult {
  if (!(e instanceof Error)) return { verdict: 'crash', detail: `threw a non-Error: ${String(e).slice(0, 200)}` };
  if (ENGINE_ERRORS.some((k) => e.constructor === k) || ENGINE_MESSAGE.test(e.message)) {
    return { verdict: 'crash', detail: `${e.constructor.name}: ${e.message.slice(0, 300)}` };
  }
  if (e.message.trim() === '') return { verdict: 'crash', detail: 'an Error with an empty message' };
  if (e.message.length > MAX_MESSAGE_CHARS) return { verdict: 'invalid', detail: `message of ${e.message.length} chars: ${e.message.slice(0, 120)}…` };
  if (mustName.length > 0 && !mustName.some((w) => e.message.includes(w))) {
    return { verdict: 'invalid', detail: `message does not name ${mustName.join(' or ')}: ${e.message.slice(0, 200)}` };
  }
  return { verdict: 'named' };
}

let heartbeat: (label?: string) => void = () => {};

/** Called as each input starts: the CLI's watchdog process ends a run that stops beating. */
export function setHeartbeat(fn: (label?: string) => void): void {
  heartbeat = fn;
}

/** Runs one input under a time limit. `body` returns null for a valid result or a defect description. */
export async function runCase(body: () => Promise<string | null> | string | null, limitMs: number, mustName?: () => readonly string[]): Promise<CaseResult> {
  heartbeat();
  const t0 = performance.now();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<CaseResult>((resolve) => {
    timer = setTimeout(() => resolve({ verdict: 'hang', detail: `no answer within ${limitMs} ms` }), limitMs);
  });
  const run = (async (): Promise<CaseResult> => {
    try {
      const problem = await body();
      return problem === null ? { verdict: 'ok' } : { verdict: 'invalid', detail: problem };
    } catch (e) {
      return classifyThrow(e, mustName?.() ?? []);
    }
  })();
  const r = await Promise.race([run, timeout]);
  clearTimeout(timer);
  // Synchronous work cannot be interrupted in-process; it is still judged by the time it took
  // (the CLI's watchdog process ends a true infinite loop).
  const ms = performance.now() - t0;
  if (r.verdict !== 'hang' && ms > limitMs) return { verdict: 'hang', detail: `took ${ms.toFixed(0)} ms (limit ${limitMs} ms)` };
  return r;
}

export interface TargetReport {
  target: string;
  tried: number;
  counts: Record<Verdict, number>;
  /** The first few defects, each with its case number. */
  defects: string[];
}

export function emptyReport(target: string): TargetReport {
  return { target, tried: 0, counts: { ok: 0, named: 0, crash: 0, invalid: 0, hang: 0 }, defects: [] };
}

export function record(rep: TargetReport, r: CaseResult, caseLabel: string): void {
  rep.tried++;
  rep.counts[r.verdict]++;
  if (r.verdict !== 'ok' && r.verdict !== 'named' && rep.defects.length < 20) rep.defects.push(`${caseLabel}: ${r.verdict}: ${r.detail ?? ''}`);
}

export function defectCount(rep: TargetReport): number {
  return rep.counts.crash + rep.counts.invalid + rep.counts.hang;
}
