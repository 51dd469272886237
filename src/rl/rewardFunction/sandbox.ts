// Runs a reward function the user wrote, `(prompt, response) => number`, inside QuickJS compiled to
// WebAssembly. The interpreter gets nothing from the host: no DOM, no storage, no fetch, no timers
// (a fresh QuickJS context has only the language's own built-ins), and only two strings go in and
// one number comes out. Each call has a wall-clock budget, each batch another, the heap and stack
// are capped, and the source is size-checked before the interpreter parses it.
import variant from '@jitl/quickjs-wasmfile-release-sync';
import { newQuickJSWASMModuleFromVariant, newVariant, type QuickJSContext, type QuickJSHandle, type QuickJSRuntime, type QuickJSWASMModule } from 'quickjs-emscripten-core';
import { REWARD_FUNCTION_LIMITS, type RewardFunctionProblem, RewardFunctionError, type RewardSample, sourceSizeProblem } from './problem.ts';

export type RewardLimits = { readonly [K in keyof typeof REWARD_FUNCTION_LIMITS]: number };

let modulePromise: Promise<QuickJSWASMModule> | null = null;

const PAGE = 64 * 1024;

/**
 * The interpreter, loaded once per thread (the .wasm ships with the page and the package). Its
 * WebAssembly memory has a fixed maximum: QuickJS's own limit cannot see the size of every
 * allocation in this build (typed arrays and long strings slip past it), the memory's ceiling can.
 */
export function loadRewardSandbox(): Promise<RewardSandbox> {
  modulePromise ??= (async () => {
    const { memoryBytes, wasmMemoryBytes } = REWARD_FUNCTION_LIMITS;
    const wasmMemory = new WebAssembly.Memory({ initial: memoryBytes / PAGE, maximum: wasmMemoryBytes / PAGE });
    const quickjs = await newQuickJSWASMModuleFromVariant(newVariant(variant, { wasmMemory }));
    // The first evaluation is slow (the engine warming up): not on a user's first call's budget.
    const warm = CompiledReward.make(quickjs, '(prompt, response) => prompt.length + response.length', { ...REWARD_FUNCTION_LIMITS, compileMs: 10_000 });
    if ('call' in warm) {
      warm.call({ prompt: 'warm', response: 'up' });
      warm.dispose();
    }
    return quickjs;
  })();
  return modulePromise.then((m) => new RewardSandbox(m));
}

/** The code units the bridge cannot carry: NUL, a lone surrogate, and the escape mark U+0001 itself. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: NUL and U+0001 are exactly what must be found
const UNSAFE = /[\0\u0001]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** Each unsafe code unit as U+0001 and its four hex digits; RESTORE_SOURCE undoes it. */
function escapeForBridge(text: string): string {
  return text.replace(UNSAFE, (c) => `\u0001${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

const RESTORE_SOURCE = '(s) => s.replace(/\\u0001([0-9a-f]{4})/g, (_, h) => String.fromCharCode(parseInt(h, 16)))';

/** A message shown as text, cut so a hostile value cannot flood the page. */
function cut(s: string, max = 120): string {
  return s.length > max ? `${s.slice(0, max)}… (${s.length} chars)` : s;
}

export class RewardSandbox {
  constructor(private readonly quickjs: QuickJSWASMModule) {}

  /** Compiles `source`: the compiled function, or the problem that refused it. */
  compile(source: string, limits: RewardLimits = REWARD_FUNCTION_LIMITS): CompiledReward | RewardFunctionProblem {
    const tooLarge = sourceSizeProblem(source);
    if (tooLarge) return tooLarge;
    return CompiledReward.make(this.quickjs, source, limits);
  }
}

/** A compiled reward function in its own QuickJS runtime; `dispose` frees it. */
export class CompiledReward {
  private deadline = Infinity;
  private interrupted = false;

  private constructor(
    private readonly runtime: QuickJSRuntime,
    private readonly vm: QuickJSContext,
    private readonly fn: QuickJSHandle,
    private readonly restoreEscaped: QuickJSHandle,
    private readonly limits: RewardLimits,
  ) {
    runtime.setInterruptHandler(() => {
      if (performance.now() <= this.deadline) return false;
      this.interrupted = true;
      return true;
    });
  }

  static make(quickjs: QuickJSWASMModule, source: string, limits: RewardLimits): CompiledReward | RewardFunctionProblem {
    const runtime = quickjs.newRuntime();
    runtime.setMemoryLimit(limits.memoryBytes);
    runtime.setMaxStackSize(limits.stackBytes);
    const vm = runtime.newContext();
    // Made before the user's source runs: its top-level code cannot replace it.
    const restoreEscaped = vm.unwrapResult(vm.evalCode(RESTORE_SOURCE, 'restore.js'));
    const fail = (p: RewardFunctionProblem) => {
      restoreEscaped.dispose();
      vm.dispose();
      runtime.dispose();
      return p;
    };
    // Evaluating the source runs its top-level code too: it gets one call's budget.
    const deadline = performance.now() + limits.compileMs;
    let interrupted = false;
    runtime.setInterruptHandler(() => (interrupted = performance.now() > deadline));
    // Parenthesised: the text must be one expression whose value is the function.
    const result = vm.evalCode(`"use strict";\n(${source}\n)`, 'reward.js');
    if (result.error) {
      const err = describeError(vm, result.error);
      result.error.dispose();
      if (interrupted) return fail({ kind: 'timeout', message: `evaluating the source took longer than ${limits.compileMs} ms` });
      if (err.memory) return fail({ kind: 'memory', message: `evaluating the source ran out of memory (limit ${limits.wasmMemoryBytes / 2 ** 20} MiB)` });
      return fail({ kind: err.name === 'SyntaxError' ? 'syntax' : 'threw', message: `the source does not compile: ${err.text}` });
    }
    const type = vm.typeof(result.value);
    if (type !== 'function') {
      result.value.dispose();
      return fail({
        kind: 'not-a-function',
        message: `the source must be one function (prompt, response) => number; it evaluates to ${/^[aeiou]/.test(type) ? 'an' : 'a'} ${type}`,
      });
    }
    return new CompiledReward(runtime, vm, result.value, restoreEscaped, limits);
  }

  /**
   * Scores every sample, or throws RewardFunctionError naming the first refused call and its
   * sample: a throw, a time-out (one call, or the batch), running out of memory, or a result that
   * is not a finite number.
   */
  scoreAll(samples: readonly RewardSample[]): Float64Array {
    const out = new Float64Array(samples.length);
    const batchEnd = performance.now() + this.limits.batchMs;
    for (let i = 0; i < samples.length; i++) {
      const r = this.call(samples[i], batchEnd);
      if (typeof r !== 'number') throw new RewardFunctionError(r);
      out[i] = r;
    }
    return out;
  }

  /**
   * `text` as a string inside the interpreter, every code unit kept. The bridge copies strings as
   * NUL-terminated UTF-8, which would end a response at its first NUL token and turn a lone
   * surrogate into U+FFFD; such code units cross escaped (escapeForBridge) and are restored inside.
   */
  private string(text: string): { handle: QuickJSHandle } | { error: string } {
    const { vm } = this;
    const escaped = escapeForBridge(text);
    if (escaped === text) return { handle: vm.newString(text) };
    const passed = vm.newString(escaped);
    const restored = vm.callFunction(this.restoreEscaped, vm.undefined, passed);
    passed.dispose();
    if (!restored.error) return { handle: restored.value };
    // Only the function's own top-level code can break it (by replacing a built-in).
    const err = describeError(vm, restored.error);
    restored.error.dispose();
    return { error: err.text };
  }

  /** One call: its score, or the problem. */
  call(sample: RewardSample, batchEnd = Infinity): number | RewardFunctionProblem {
    const { vm, limits } = this;
    const callEnd = performance.now() + limits.callMs;
    this.deadline = Math.min(callEnd, batchEnd);
    this.interrupted = false;
    const args = [this.string(sample.prompt), this.string(sample.response)];
    const broken = args.find((a) => 'error' in a);
    if (broken) {
      for (const a of args) if ('handle' in a) a.handle.dispose();
      this.deadline = Infinity;
      return { kind: 'threw', message: `passing the sample in threw ${cut(broken.error)}`, sample };
    }
    const [prompt, response] = args.map((a) => (a as { handle: QuickJSHandle }).handle);
    const result = vm.callFunction(this.fn, vm.undefined, prompt, response);
    prompt.dispose();
    response.dispose();
    this.deadline = Infinity;
    if (result.error) {
      const err = describeError(vm, result.error);
      result.error.dispose();
      if (this.interrupted) {
        return callEnd <= batchEnd
          ? { kind: 'timeout', message: `the call took longer than ${limits.callMs} ms`, sample }
          : { kind: 'batch-timeout', message: `scoring the batch took longer than ${limits.batchMs} ms`, sample };
      }
      if (err.memory) return { kind: 'memory', message: `the call ran out of memory (limit ${limits.wasmMemoryBytes / 2 ** 20} MiB)`, sample };
      return { kind: 'threw', message: `the call threw ${err.text}`, sample };
    }
    const value = result.value;
    const type = vm.typeof(value);
    const shown =
      type === 'number'
        ? null
        : cut(type === 'string' ? JSON.stringify(vm.getString(value)) : type === 'undefined' ? 'undefined' : `${/^[aeiou]/.test(type) ? 'an' : 'a'} ${type}`);
    const n = type === 'number' ? vm.getNumber(value) : Number.NaN;
    value.dispose();
    if (shown !== null) return { kind: 'not-a-number', message: `the call returned ${shown}; allowed: a finite number`, sample };
    if (!Number.isFinite(n)) return { kind: 'not-a-number', message: `the call returned ${n}; allowed: a finite number`, sample };
    return n;
  }

  dispose(): void {
    this.fn.dispose();
    this.restoreEscaped.dispose();
    this.vm.dispose();
    this.runtime.dispose();
  }
}

/** An error value from inside the interpreter, as text ("TypeError: x is not a function"). */
function describeError(vm: QuickJSContext, handle: QuickJSHandle): { name: string; text: string; memory: boolean } {
  const dumped: unknown = vm.dump(handle);
  const o = typeof dumped === 'object' && dumped !== null ? (dumped as { name?: unknown; message?: unknown }) : null;
  const name = typeof o?.name === 'string' ? o.name : 'Error';
  const message = typeof o?.message === 'string' ? o.message : String(dumped);
  return { name, text: cut(`${name}: ${message}`), memory: /out of memory/i.test(message) };
}

/** Scores a batch with a fresh interpreter (no state carries from one batch to the next); throws RewardFunctionError. */
export function scoreWithFunction(sandbox: RewardSandbox, source: string, samples: readonly RewardSample[], limits: RewardLimits = REWARD_FUNCTION_LIMITS): Float64Array {
  const compiled = sandbox.compile(source, limits);
  if (!(compiled instanceof CompiledReward)) throw new RewardFunctionError(compiled);
  try {
    return compiled.scoreAll(samples);
  } finally {
    compiled.dispose();
  }
}

/** The check before Start: compiles `source` and calls it once on `sample`; the score, or the problem. */
export function checkRewardFunction(sandbox: RewardSandbox, source: string, sample: RewardSample): { score: number } | { problem: RewardFunctionProblem } {
  try {
    return { score: scoreWithFunction(sandbox, source, [sample])[0] };
  } catch (e) {
    if (e instanceof RewardFunctionError) return { problem: e.problem };
    throw e;
  }
}
