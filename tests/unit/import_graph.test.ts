// The layering rules of the house, read off the source: gpu → backend → ops → model → rl → worker
// → store → ui. Every `import`/`export … from`/`import()`/`new URL(…, import.meta.url)`/`import.meta.glob`
// in src/** (type-only imports included: the rule holds "even for types") becomes an edge, and the
// graph is checked for the forbidden directions, for circles, and for files nothing uses.
import { readFileSync, existsSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, sourceFiles } from '../helpers/sourceFiles.ts';

// Specifiers in one file: static imports/re-exports (also multi-line and type-only), side-effect
// imports, dynamic import(), worker URLs and literal import.meta.glob paths.
const SPEC_RES = [
  /\b(?:import|export)\s[^'"`;]*?\bfrom\s*['"]([^'"]+)['"]/g,
  /\bimport\s*['"]([^'"]+)['"]/g,
  /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g,
  /new URL\(\s*['"]([^'"]+)['"]\s*,\s*import\.meta\.url/g,
  /import\.meta\.glob(?:<[^>]*>)?\(\s*['"]([^'"*]+)['"]/g,
];

function stripComments(src: string): string {
  // whole-line // comments first: one may hold a "/*" (a glob such as src/tasks/*) that would open a block
  return src
    .replace(/^\s*\/\/.*$/gm, '')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
}

/** Resolves a relative specifier to a repo path, or undefined for a package or a non-source file. */
function resolveSpec(from: string, spec: string): string | undefined {
  const clean = spec.replace(/\?.*$/, '');
  if (!clean.startsWith('.') && !clean.startsWith('/')) return undefined;
  const abs = clean.startsWith('/') ? join(ROOT, clean) : resolve(ROOT, dirname(from), clean);
  const rel = relative(ROOT, abs).split('\\').join('/');
  if (!/\.(ts|tsx|mjs)$/.test(rel)) return undefined; // .wgsl, .json, .safetensors: data, not code
  if (!existsSync(abs)) throw new Error(`${from}: import of missing ${spec}`);
  return rel;
}

function importGraph(): Map<string, string[]> {
  const files = ['src', 'tests', 'e2e', 'scripts'].flatMap((d) => sourceFiles(d, /\.(ts|tsx|mjs)$/));
  const extra = ['vite.config.ts', 'vitest.config.ts', 'playwright.config.ts'].filter((f) => existsSync(join(ROOT, f)));
  const graph = new Map<string, string[]>();
  for (const f of [...files, ...extra]) {
    const src = stripComments(readFileSync(join(ROOT, f), 'utf8'));
    const deps = new Set<string>();
    for (const re of SPEC_RES)
      for (const m of src.matchAll(re)) {
        const d = resolveSpec(f, m[1]);
        if (d) deps.add(d);
      }
    graph.set(f, [...deps]);
  }
  return graph;
}

/** The layer a src file belongs to: its first directory under src/. */
const layer = (f: string) => (f.startsWith('src/') ? f.split('/')[1] : f.split('/')[0]);

/** Forbidden edges: importer layer → imported layers (the layer order, read downwards only). */
const FORBIDDEN: Record<string, string[]> = {
  gpu: ['backend', 'ops', 'model', 'rl', 'worker', 'store', 'ui'],
  reference: ['backend', 'ops', 'gpu', 'model', 'rl', 'worker', 'store', 'ui'],
  backend: ['ops', 'model', 'rl', 'worker', 'store', 'ui'],
  ops: ['model', 'rl', 'worker', 'store', 'ui', 'tasks', 'cli', 'bench', 'fuzz'],
  model: ['rl', 'worker', 'store', 'ui', 'tasks'],
  tasks: ['backend', 'ops', 'gpu', 'rl', 'worker', 'store', 'ui'],
  rl: ['worker', 'store', 'ui'],
  worker: ['store', 'ui'],
  store: ['ui', 'gpu', 'backend', 'ops'],
  ui: ['gpu', 'backend', 'ops'],
  export: ['worker', 'store', 'ui'],
  // Tests may unit-test any layer (the page's pure chart helpers included); benches and CLIs run
  // the layers below the page, never the page's own modules; the fuzz campaign drives the store's
  // parsers and the layers the CLIs drive, never a CLI itself.
  bench: ['ui', 'store'],
  cli: ['ui', 'store', 'worker'],
  fuzz: ['ui', 'cli'],
  record: ['ui', 'cli'],
};

/** Entry points: what index.html, package.json scripts, vitest/playwright configs start. */
function entryPoints(): Set<string> {
  const e = new Set<string>(['vite.config.ts', 'vitest.config.ts', 'playwright.config.ts']);
  for (const m of readFileSync(join(ROOT, 'index.html'), 'utf8').matchAll(/<script type="module" src="\/(src\/[^"]+)"/g)) e.add(m[1]);
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  for (const cmd of Object.values(pkg.scripts)) for (const m of cmd.matchAll(/(src\/\S+\.ts|scripts\/\S+\.mjs)/g)) e.add(m[1]);
  return e;
}

// Entry points of a runner: test files, the gpu project's setup, and the wgpu runner Deno starts (scripts/wgpu-tests.mjs).
const isTestRunnerFile = (f: string) => /\.(test|spec)\.ts$/.test(f) || f === 'tests/gpu/setup.ts' || f === 'tests/wgpu/run.ts';

describe('import graph of src/**', () => {
  const graph = importGraph();

  it('has no edge against the layer order (rl → worker, ui/store → gpu/backend, reference → backend, …)', () => {
    const bad: string[] = [];
    for (const [f, deps] of graph) {
      const from = layer(f);
      for (const d of deps) {
        const to = layer(d);
        if (FORBIDDEN[from]?.includes(to)) bad.push(`${f} → ${d}`);
        if (f.startsWith('src/') && !d.startsWith('src/')) bad.push(`${f} → ${d} (src imports outside src)`);
      }
    }
    expect(bad).toEqual([]);
  });

  it('has no import of src/cli/ from outside it: the CLIs use the layers, nothing uses the CLIs', () => {
    // src/fuzz/kernels.ts reads the kernel list and runner from src/cli today; the op registry
    // (issue #30 item 1) moves them below, and this file leaves the list then.
    const PENDING = new Set(['src/fuzz/kernels.ts']);
    const bad: string[] = [];
    for (const [f, deps] of graph) {
      if (!f.startsWith('src/') || layer(f) === 'cli' || PENDING.has(f)) continue;
      for (const d of deps) if (layer(d) === 'cli') bad.push(`${f} → ${d}`);
    }
    expect(bad).toEqual([]);
  });

  it('has no circle', () => {
    const cycles: string[] = [];
    const state = new Map<string, 1 | 2>(); // 1 = on the stack, 2 = done
    const stack: string[] = [];
    const visit = (f: string) => {
      state.set(f, 1);
      stack.push(f);
      for (const d of graph.get(f) ?? []) {
        const s = state.get(d);
        if (s === 1) cycles.push([...stack.slice(stack.indexOf(d)), d].join(' → '));
        else if (s === undefined) visit(d);
      }
      stack.pop();
      state.set(f, 2);
    };
    for (const f of graph.keys()) if (!state.has(f)) visit(f);
    expect(cycles).toEqual([]);
  });

  it('has no src file that nothing imports (entry points excepted)', () => {
    const used = new Set<string>();
    for (const deps of graph.values()) for (const d of deps) used.add(d);
    const entries = entryPoints();
    const orphans = [...graph.keys()].filter((f) => f.startsWith('src/') && !used.has(f) && !entries.has(f));
    expect(orphans).toEqual([]);
  });

  it('every test helper is used by a test', () => {
    const used = new Set<string>();
    for (const deps of graph.values()) for (const d of deps) used.add(d);
    const orphans = [...graph.keys()].filter((f) => f.startsWith('tests/') && !isTestRunnerFile(f) && !used.has(f) && !f.startsWith('tests/fixtures/'));
    expect(orphans).toEqual([]);
  });
});
