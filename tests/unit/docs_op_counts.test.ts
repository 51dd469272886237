// The counts docs/architecture.md states about ops and kernels are the registry's: the ops in it,
// the kernels they declare, the character model's that a CPU adapter (SwiftShader) and a GPU
// build ahead of use, and those the first iteration waits for.
// Any other "<n> ops" or "<n> kernels" in the page fails here until it is checked too.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { forAdapter } from '../../src/gpu/pipelines.ts';
import { declaredKernels, modelKernels, OPS } from '../../src/ops/registry.ts';
import { kernelsInOrder } from '../../src/worker/firstKernels.ts';

const doc = readFileSync(resolve(import.meta.dirname, '../../docs/architecture.md'), 'utf8').replace(/\s+/g, ' ');

/** The number in `doc` captured by `re` (its first group); fails when the sentence is gone. */
function stated(re: RegExp): number {
  const m = doc.match(re);
  expect(m, `docs/architecture.md: no match for ${re}`).not.toBeNull();
  return Number(m![1]);
}

describe('docs/architecture.md counts the ops and kernels the registry has', () => {
  it('ops in the registry', () => {
    expect(stated(/\((\d+) ops in the registry/)).toBe(OPS.length);
  });

  it("the character model's kernels, built ahead on a CPU adapter and on a GPU, and all declared", () => {
    expect(stated(/(\d+) declared, some ops pick a variant by adapter/)).toBe(modelKernels('char').length);
    expect(stated(/(\d+) on a CPU adapter such as SwiftShader/)).toBe(modelKernels('char', true).length);
    expect(stated(/(\d+) on a GPU;/)).toBe(modelKernels('char', false).length);
    // The progress counts the kernels the first iteration waits for (src/worker/firstKernels.ts).
    expect(stated(/compiling GPU kernels \d+ \/ (\d+)/)).toBe(forAdapter(kernelsInOrder().first, true).length);
    expect(stated(/the registry declares (\d+)/)).toBe(declaredKernels().length);
  });

  it('states no other count of ops or kernels', () => {
    const counts = [...doc.matchAll(/\b(\d+) (ops|kernels)\b/g)].map((m) => m[0]);
    expect(counts).toEqual([`${OPS.length} ops`]);
  });
});
