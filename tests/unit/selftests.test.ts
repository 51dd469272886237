// The page's self-test worker imports its cases from src/ops/selftests.ts, not from the registry
// (which would load every op and, through the worker's shader list, every shader before the first
// view). Here that short list is held to the registry: every op with a self-test case, in
// registry order; and the worker's shader list to what those ops' kernels include.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { OPS, SELFTESTS as REGISTRY_SELFTESTS } from '../../src/ops/registry.ts';
import { SELFTEST_OPS, SELFTESTS } from '../../src/ops/selftests.ts';

const ROOT = resolve(import.meta.dirname, '../..');

/** The shader and every file it `// @include`s, transitively. */
function withIncludes(name: string, seen = new Set<string>()): Set<string> {
  if (seen.has(name)) return seen;
  seen.add(name);
  const code = readFileSync(join(ROOT, 'shaders', `${name}.wgsl`), 'utf8');
  for (const m of code.matchAll(/^[ \t]*\/\/ @include ([\w-]+)[ \t]*$/gm)) withIncludes(m[1], seen);
  return seen;
}

describe('the self-test worker loads only what its cases need', () => {
  it('its cases are the registry’s: every op with a self-test case, in registry order', () => {
    expect(SELFTESTS.length).toBeGreaterThan(0);
    expect(SELFTESTS).toEqual(REGISTRY_SELFTESTS);
    expect(SELFTEST_OPS).toEqual(OPS.filter((op) => op.def.selftest));
  });

  it('its shader list holds every shader (with includes) of those ops’ kernels, and no other', () => {
    const worker = readFileSync(join(ROOT, 'src/worker/selftest.worker.ts'), 'utf8');
    const glob = worker.match(/import\.meta\.glob\(\[([^\]]*)\]/);
    expect(glob, 'the worker names its shaders in one import.meta.glob list').not.toBeNull();
    const listed = [...glob![1].matchAll(/'\/shaders\/([\w-]+)\.wgsl'/g)].map((m) => m[1]).sort();
    const needed = new Set<string>();
    for (const op of SELFTEST_OPS) for (const k of op.def.kernels) for (const s of withIncludes(k.shader)) needed.add(s);
    expect(listed).toEqual([...needed].sort());
  });
});
