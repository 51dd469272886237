// The part of Vitest's API the gpu test files use, for running those same files under Deno (whose
// WebGPU is wgpu, Firefox's implementation): describe/it (with .each and .skip), the hooks, and
// Vitest's own `expect` (chai with @vitest/expect's matchers, as Vitest builds it), so a test
// checks the same things with the same tolerances on both engines. tests/wgpu/deno.json maps the
// `vitest` import here; tests/wgpu/run.ts collects the files and runs the tests one by one.
import * as chai from 'chai';
import { JestAsymmetricMatchers, JestChaiExpect, JestExtend } from '@vitest/expect';

chai.use(JestExtend);
chai.use(JestChaiExpect);
chai.use(JestAsymmetricMatchers);

type Fn = () => unknown;
export interface TestCase {
  name: string;
  fn: Fn | null; // null: skipped
  timeoutMs: number;
}
export interface Suite {
  name: string;
  suites: Suite[];
  tests: TestCase[];
  beforeAll: Fn[];
  afterAll: Fn[];
  beforeEach: Fn[];
  afterEach: Fn[];
  skipped: boolean;
}

export function newSuite(name: string, skipped = false): Suite {
  return { name, suites: [], tests: [], beforeAll: [], afterAll: [], beforeEach: [], afterEach: [], skipped };
}

let current: Suite = newSuite('');
/** The runner starts each file with a fresh root suite and collects the file into it. */
export function setRootSuite(s: Suite): void {
  current = s;
}

const DEFAULT_TIMEOUT_MS = 120_000; // vitest.config.ts's gpu project

function withSuite(s: Suite, body: () => unknown): void {
  const parent = current;
  parent.suites.push(s);
  current = s;
  try {
    const r = body();
    if (r instanceof Promise) throw new Error(`describe("${s.name}") returned a promise: collection is synchronous`);
  } finally {
    current = parent;
  }
}

/** Vitest's printf-style titles for .each: %s %d %i %f %j %o %# %%, and $name for object rows. */
function formatTitle(title: string, args: unknown[], index: number): string {
  let i = 0;
  let out = title.replace(/%[sdifjo#%]/g, (m) => {
    if (m === '%%') return '%';
    if (m === '%#') return String(index);
    const v = args[i++];
    if (m === '%d' || m === '%i') return String(m === '%i' ? Math.trunc(Number(v)) : Number(v));
    if (m === '%f') return String(Number(v));
    if (m === '%j' || m === '%o') return JSON.stringify(v);
    return typeof v === 'string' ? v : typeof v === 'object' ? JSON.stringify(v) : String(v);
  });
  const row = args[0];
  if (args.length === 1 && row && typeof row === 'object' && !Array.isArray(row)) {
    out = out.replace(/\$([\w.]+)/g, (m, path: string) => {
      let v: unknown = row;
      for (const k of path.split('.')) v = v && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined;
      return v === undefined ? m : typeof v === 'string' ? v : JSON.stringify(v);
    });
  }
  return out;
}

function rowArgs(row: unknown): unknown[] {
  return Array.isArray(row) ? row : [row];
}

type TestArgs = [string, Fn?, (number | { timeout?: number })?] | [string, { timeout?: number }, Fn];

function addTest(skipped: boolean, ...args: TestArgs): void {
  const [name, a, b] = args;
  const fn = (typeof a === 'function' ? a : b) as Fn | undefined;
  const opt = typeof a === 'function' ? b : a;
  const timeoutMs = typeof opt === 'number' ? opt : ((opt as { timeout?: number } | undefined)?.timeout ?? DEFAULT_TIMEOUT_MS);
  current.tests.push({ name, fn: skipped || current.skipped || !fn ? null : fn, timeoutMs });
}

function makeIt(skipped: boolean) {
  const f = (...args: TestArgs) => addTest(skipped, ...args);
  f.each = (table: readonly unknown[]) => (name: string, fn: (...a: unknown[]) => unknown, opt?: number | { timeout?: number }) => {
    table.forEach((row, i) => {
      const a = rowArgs(row);
      addTest(skipped, formatTitle(name, a, i), () => fn(...a), opt);
    });
  };
  f.skipIf = (cond: unknown) => makeIt(skipped || !!cond);
  f.runIf = (cond: unknown) => makeIt(skipped || !cond);
  return f;
}

function makeDescribe(skipped: boolean) {
  // Vitest's describe(name, body) and describe(name, options, body); the options (a timeout) do not
  // apply here: every test already runs under the gpu project's timeout.
  const f = (name: string, optsOrBody: object | (() => unknown), maybeBody?: () => unknown) =>
    withSuite(newSuite(name, skipped || current.skipped), typeof optsOrBody === 'function' ? (optsOrBody as () => unknown) : (maybeBody as () => unknown));
  f.each = (table: readonly unknown[]) => (name: string, body: (...a: unknown[]) => unknown) => {
    table.forEach((row, i) => {
      const a = rowArgs(row);
      withSuite(newSuite(formatTitle(name, a, i), skipped || current.skipped), () => body(...a));
    });
  };
  f.skipIf = (cond: unknown) => makeDescribe(skipped || !!cond);
  f.runIf = (cond: unknown) => makeDescribe(skipped || !cond);
  return f;
}

const itImpl = Object.assign(makeIt(false), { skip: makeIt(true), only: makeIt(false), concurrent: makeIt(false) });
export const it = itImpl;
export const test = itImpl;
export const describe = Object.assign(makeDescribe(false), { skip: makeDescribe(true), only: makeDescribe(false) });

export function beforeAll(fn: Fn): void {
  current.beforeAll.push(fn);
}
export function afterAll(fn: Fn): void {
  current.afterAll.push(fn);
}
export function beforeEach(fn: Fn): void {
  current.beforeEach.push(fn);
}
export function afterEach(fn: Fn): void {
  current.afterEach.push(fn);
}

type Expect = ((value: unknown, message?: string) => Chai.Assertion) & Record<string, unknown>;
const chaiExpect = chai.expect as unknown as Record<string, unknown>;
const asymmetric = ['anything', 'any', 'stringContaining', 'objectContaining', 'arrayContaining', 'stringMatching', 'closeTo', 'not'];
export const expect: Expect = Object.assign((value: unknown, message?: string) => chai.expect(value, message), chai.expect, {
  ...Object.fromEntries(asymmetric.map((n) => [n, chaiExpect[n]])),
  assert: chai.assert,
  unreachable: (message?: string) => chai.assert.fail(`expected${message ? ` "${message}" ` : ' '}not to be reached`),
  soft: (value: unknown, message?: string) => chai.expect(value, message),
}) as unknown as Expect;
