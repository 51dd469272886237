// The sandbox a written reward function runs in (QuickJS compiled to WebAssembly): every way a
// function can fail is refused with its own named problem and the sample that caused it, nothing
// of the host is reachable from inside, and a working function scores exactly what it computes.
import { beforeAll, describe, expect, it } from 'vitest';
import { REWARD_FUNCTION_LIMITS, RewardFunctionError, type RewardFunctionProblem } from '../../src/rl/rewardFunction/problem.ts';
import { CompiledReward, checkRewardFunction, loadRewardSandbox, type RewardSandbox, scoreWithFunction } from '../../src/rl/rewardFunction/sandbox.ts';

const SAMPLE = { prompt: 'the food was', response: ' good and good.' };
let sandbox: RewardSandbox;
beforeAll(async () => {
  sandbox = await loadRewardSandbox();
});

/** The problem `source` gets on SAMPLE (compiling or calling), or its score. */
function outcome(source: string): { score: number } | { problem: RewardFunctionProblem } {
  return checkRewardFunction(sandbox, source, SAMPLE);
}
const problemOf = (source: string): RewardFunctionProblem => {
  const r = outcome(source);
  if (!('problem' in r)) throw new Error(`${source} was accepted with score ${r.score}`);
  return r.problem;
};

describe('reward function sandbox', () => {
  it('a working function scores exactly what it computes, per sample', () => {
    const samples = [SAMPLE, { prompt: '12+34=', response: '46' }, { prompt: '', response: '' }];
    const scores = scoreWithFunction(sandbox, '(prompt, response) => response.split("good").length - 1 + prompt.length / 100', samples);
    expect(Array.from(scores)).toEqual([2 + 12 / 100, 0 + 6 / 100, 0]);
  });

  it('a throw is refused, naming the error and the sample', () => {
    const p = problemOf('(prompt, response) => { throw new TypeError("bad " + response) }');
    expect(p).toEqual({ kind: 'threw', message: 'the call threw TypeError: bad  good and good.', sample: SAMPLE });
  });

  it('an endless loop is stopped by the per-call time budget', () => {
    const t0 = performance.now();
    const p = problemOf('(prompt, response) => { for (;;) {} }');
    expect(p.kind).toBe('timeout');
    expect(p.message).toBe(`the call took longer than ${REWARD_FUNCTION_LIMITS.callMs} ms`);
    expect(p.sample).toEqual(SAMPLE);
    expect(performance.now() - t0).toBeLessThan(2000);
  });

  it('a batch that is slow only in total is stopped by the per-batch budget, naming the sample it reached', () => {
    // 20 ms a call, far within a (widened, so a busy machine cannot trip it) per-call budget;
    // 100 calls are not within a batch budget of 300 ms.
    const slow = '(prompt, response) => { const end = Date.now() + 20; while (Date.now() < end) {} return 1 }';
    const samples = Array.from({ length: 100 }, (_, i) => ({ prompt: `p${i}`, response: 'r' }));
    const limits = { ...REWARD_FUNCTION_LIMITS, callMs: 5000, batchMs: 300 };
    let err: unknown;
    try {
      scoreWithFunction(sandbox, slow, samples, limits);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(RewardFunctionError);
    const p = (err as RewardFunctionError).problem;
    expect(p.kind).toBe('batch-timeout');
    expect(p.message).toBe('scoring the batch took longer than 300 ms');
    // The sample it reached, not the first: how far it got depends on the machine's load (about 15
    // idle, 3 seen with both cores busy).
    expect(Number(p.sample?.prompt.slice(1))).toBeGreaterThan(0);
  });

  it.each([
    ['NaN', '(p, r) => NaN', 'the call returned NaN; allowed: a finite number'],
    ['Infinity', '(p, r) => 1 / 0', 'the call returned Infinity; allowed: a finite number'],
    ['a string', '(p, r) => "3"', 'the call returned "3"; allowed: a finite number'],
    ['undefined', '(p, r) => { r.length }', 'the call returned undefined; allowed: a finite number'],
    ['an object', '(p, r) => ({ score: 1 })', 'the call returned an object; allowed: a finite number'],
  ])('a result that is %s is refused as not a number', (_, source, message) => {
    expect(problemOf(source)).toEqual({ kind: 'not-a-number', message, sample: SAMPLE });
  });

  it('fetch, the DOM, storage, timers and Node are not there: fetch is a ReferenceError', () => {
    expect(problemOf('(p, r) => fetch("/")')).toMatchObject({ kind: 'threw', message: "the call threw ReferenceError: 'fetch' is not defined" });
    const probe =
      '(p, r) => { const names = ["fetch", "window", "document", "localStorage", "indexedDB", "XMLHttpRequest", "WebSocket", "importScripts", "postMessage", "setTimeout", "require", "process", "WebAssembly"]; const found = names.filter((n) => typeof globalThis[n] !== "undefined"); if (found.length) throw new Error(found.join()); return 0 }';
    // A widened per-call budget: this checks names, not time (13 lookups can pass 50 ms on a busy machine).
    expect(Array.from(scoreWithFunction(sandbox, probe, [SAMPLE], { ...REWARD_FUNCTION_LIMITS, callMs: 5000 }))).toEqual([0]);
  });

  it('a memory bomb runs out of the sandbox memory, not the worker’s', () => {
    for (const bomb of ['(p, r) => { const a = []; for (;;) a.push(new Uint8Array(1 << 20)) }', '(p, r) => { const a = []; for (let i = 0; ; i++) a.push("x".repeat(1e5) + i) }']) {
      const p = problemOf(bomb);
      expect(p.kind, bomb).toBe('memory');
      expect(p.message).toBe(`the call ran out of memory (limit ${REWARD_FUNCTION_LIMITS.wasmMemoryBytes / 2 ** 20} MiB)`);
    }
    // The interpreter is still usable afterwards.
    expect(outcome('(p, r) => 7')).toEqual({ score: 7 });
  });

  it('deep recursion stops at the sandbox stack', () => {
    expect(problemOf('(p, r) => { const f = (n) => f(n + 1) + 1; return f(0) }')).toMatchObject({ kind: 'threw', message: 'the call threw InternalError: stack overflow' });
  });

  it('a source over the size limit is refused before it is parsed', () => {
    const big = `(p, r) => 1 /* ${'x'.repeat(REWARD_FUNCTION_LIMITS.maxSourceBytes)} */`;
    const c = sandbox.compile(big);
    expect(c).toEqual({ kind: 'too-large', message: `the source is ${big.length} bytes; allowed: at most 8192 bytes (8 KiB)` });
    // Bytes, not characters: 3000 × "é" (2 bytes each) + the function is over.
    expect(sandbox.compile(`(p, r) => "${'é'.repeat(4100)}".length`)).toMatchObject({ kind: 'too-large' });
  });

  it('a syntax error, a non-function and slow top-level code are refused at compile time', () => {
    expect(problemOf('(prompt, response) =>')).toMatchObject({ kind: 'syntax', message: expect.stringMatching(/^the source does not compile: SyntaxError/) });
    expect(problemOf('42')).toEqual({ kind: 'not-a-function', message: 'the source must be one function (prompt, response) => number; it evaluates to a number' });
    expect(problemOf('(() => { for (;;) {} })()')).toEqual({ kind: 'timeout', message: `evaluating the source took longer than ${REWARD_FUNCTION_LIMITS.compileMs} ms` });
  });

  it('each batch gets a fresh interpreter: state kept in a closure does not carry over', () => {
    const counter = '(() => { let n = 0; return (p, r) => ++n })()';
    expect(Array.from(scoreWithFunction(sandbox, counter, [SAMPLE, SAMPLE]))).toEqual([1, 2]);
    expect(Array.from(scoreWithFunction(sandbox, counter, [SAMPLE, SAMPLE]))).toEqual([1, 2]);
    const c = sandbox.compile('(p, r) => 1');
    expect(c).toBeInstanceOf(CompiledReward);
    (c as CompiledReward).dispose();
  });

  it('every code unit of prompt and response arrives: NUL tokens, lone surrogates, the escape mark itself', () => {
    // a hash of both strings' code units, the same text run here and inside the sandbox
    const hashSource =
      '(p, r) => { let h = p.length * 1000 + r.length; for (const s of [p, r]) for (let i = 0; i < s.length; i++) h = (h * 31 + s.charCodeAt(i)) % 1000003; return h; }';
    const hash = new Function(`return ${hashSource}`)() as (p: string, r: string) => number;
    const texts = ['ee\0\0', '\0', '\u0001', '\u00010041', '\u0001\u0001\0', 'a\uD800b', '\uDC00', 'x\uDBFF', '\uDE00\uD83D', '😀 ok', 'plain ascii', ''];
    const samples = texts.flatMap((response) => [
      { prompt: 'hello there', response },
      { prompt: response, response: 'the cat' },
    ]);
    expect(Array.from(scoreWithFunction(sandbox, hashSource, samples))).toEqual(samples.map((x) => hash(x.prompt, x.response)));
    expect(Array.from(scoreWithFunction(sandbox, '(p, r) => r.length', [{ prompt: '', response: 'ee\0\0' }]))).toEqual([4]);
  });

  it('a function that breaks String.prototype.replace is refused by name on a sample that needs escaping, not crashed', () => {
    const source = '(String.prototype.replace = () => { throw new Error("no replace") }, (p, r) => r.length)';
    expect(Array.from(scoreWithFunction(sandbox, source, [SAMPLE]))).toEqual([SAMPLE.response.length]);
    const sample = { prompt: 'p', response: 'a\0' };
    expect(checkRewardFunction(sandbox, source, sample)).toEqual({ problem: { kind: 'threw', message: 'passing the sample in threw Error: no replace', sample } });
  });
});
