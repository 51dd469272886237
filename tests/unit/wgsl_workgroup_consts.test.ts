// No workgroup array is sized by a pipeline-overridable constant: Safari was seen to take
// `override WG: u32; var<workgroup> x: array<f32, WG>;` as an array of 0 words (the kernel ran,
// wrote nothing and raised no error; kishimisu/WebGPU-Radix-Sort#10). The sizes are module-scope
// `const`s that the host sets in each variant's source (specializeConstants in src/gpu/shaders.ts).
// Shaders are scanned after includes: lib_tree_sum's `tree: array<f32, WG>` names a WG that only
// the including shader declares, so the file alone cannot say what WG is.
import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { KernelSpec } from '../../src/gpu/pipelines.ts';
import { decodeStepKernels } from '../../src/ops/decodeStep.ts';
import { declaredKernels } from '../../src/ops/registry.ts';
import { shaderSource, specializeConstants } from '../../src/gpu/shaders.ts';
import { loadShadersFromDisk, SHADER_DIR } from '../../src/node/shaders.ts';

const stripComments = (code: string) => code.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');

/** The type text of each `var<workgroup> name: T;` in code (T may nest: `array<vec4<f32>, N>`). */
function workgroupVars(code: string): { name: string; type: string }[] {
  return [...stripComments(code).matchAll(/\bvar\s*<\s*workgroup\s*>\s*(\w+)\s*:\s*([^;]+);/g)].map((m) => ({ name: m[1], type: m[2].trim() }));
}

/** `name: type` of every workgroup variable whose type (an array length) names an `override` of code. */
function overrideSizedWorkgroupArrays(code: string): string[] {
  const body = stripComments(code);
  const overrides = new Set([...body.matchAll(/\boverride\s+(\w+)/g)].map((m) => m[1]));
  return workgroupVars(body)
    .filter((v) => (v.type.match(/\b[A-Za-z_]\w*\b/g) ?? []).some((id) => overrides.has(id)))
    .map((v) => `${v.name}: ${v.type}`);
}

const shaders = readdirSync(SHADER_DIR)
  .filter((f) => f.endsWith('.wgsl'))
  .map((f) => f.slice(0, -5));

describe('workgroup array sizes are consts, never overrides', () => {
  it('the scanner flags an override-sized workgroup array and passes a const-sized one', () => {
    const bad = ['override WG: u32 = 64;', 'var<workgroup> ok: array<f32, 4>;', 'var<workgroup> tree: array<f32, WG>;', '@compute @workgroup_size(WG) fn main() {}'].join('\n');
    expect(overrideSizedWorkgroupArrays(bad)).toEqual(['tree: array<f32, WG>']);
    const nested = 'override COLS: u32;\noverride LANES: u32 = 16;\nvar<workgroup> a: array<vec2<f32>, COLS * LANES>;\nvar  <workgroup>b:array<array<f32, 4>, LANES>;';
    expect(overrideSizedWorkgroupArrays(nested)).toEqual(['a: array<vec2<f32>, COLS * LANES>', 'b: array<array<f32, 4>, LANES>']);
    expect(overrideSizedWorkgroupArrays(bad.replace('override', 'const'))).toEqual([]);
    // A commented-out override declares nothing.
    expect(overrideSizedWorkgroupArrays('// override WG: u32 = 64;\nconst WG: u32 = 64u;\nvar<workgroup> t: array<f32, WG>;')).toEqual([]);
  });

  it('finds the workgroup arrays of the real shaders (the scan is not vacuous)', () => {
    loadShadersFromDisk();
    const found = shaders.filter((n) => !n.startsWith('lib_')).flatMap((n) => workgroupVars(shaderSource(n)).map((v) => `${n}.${v.name}`));
    for (const v of ['actor_loss.part', 'aggregate.red', 'aggregate.tree', 'decode_step.wm', 'layernorm.col_a', 'optim.red', 'whiten.tree']) expect(found).toContain(v);
  });

  it.each(shaders)('%s (includes expanded) sizes no workgroup array by an override', (name) => {
    loadShadersFromDisk();
    expect(overrideSizedWorkgroupArrays(shaderSource(name))).toEqual([]);
  });

  const specs: KernelSpec[] = [...declaredKernels(), ...decodeStepKernels({ dModel: 32, nHead: 2, seqLen: 16 })];
  it.each(specs.filter((s) => s.constants).map((s) => [`${s.shader}#${s.entry}`, s] as const))('%s: each constant is set in the source', (_key, spec) => {
    loadShadersFromDisk();
    const src = shaderSource(spec.shader, spec.constants);
    for (const [k, v] of Object.entries(spec.constants!)) expect(src).toMatch(new RegExp(`^const ${k}: u32 = ${v}u;`, 'm'));
    expect(overrideSizedWorkgroupArrays(src)).toEqual([]);
  });

  it('specializeConstants sets values in place and rejects names the shader does not declare', () => {
    const code = 'const WG: u32 = 64u; // threads\nconst C: f32 = 1.0;\nfn f() {\n  const WG2 = 3;\n}\n';
    const out = specializeConstants(code, { WG: 256, C: 0.5 });
    expect(out).toBe('const WG: u32 = 256u; // threads\nconst C: f32 = 0.5;\nfn f() {\n  const WG2 = 3;\n}\n');
    expect(specializeConstants(code)).toBe(code);
    expect(() => specializeConstants(code, { WG2: 1 })).toThrow(/WG2/); // function scope: not a module const
    expect(() => specializeConstants('override WG: u32 = 64;', { WG: 1 })).toThrow(/WG/);
    expect(() => specializeConstants(code, { WG: -1 })).toThrow(/u32/);
    expect(() => specializeConstants(code, { WG: 1.5 })).toThrow(/u32/);
  });
});
