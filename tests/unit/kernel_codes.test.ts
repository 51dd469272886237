// The kernel codes (src/reference/kernelCodes.ts) are the one source of the integers the WGSL
// kernels branch on: the shader loader declares them as WGSL constants, and the shaders must use
// those names. A shader that compared a coded field with a literal, or an enum value no shader
// names (a new estimator without its WGSL branch), fails here before any GPU test runs.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { codeDeclarations, registerShaders, shaderSource } from '../../src/gpu/shaders.ts';
import { loadShadersFromDisk, SHADER_DIR } from '../../src/node/shaders.ts';
import { LOSS_AGGS, NORM_SCALES } from '../../src/reference/aggregate.ts';
import { AGG_CODE, aggCode, WGSL_ENUMS, WGSL_F32_LIMITS, wgslCodeName, wgslCodes } from '../../src/reference/kernelCodes.ts';

const files = readdirSync(SHADER_DIR)
  .filter((f) => f.endsWith('.wgsl'))
  .map((f) => f.slice(0, -5));
const stripComments = (code: string) => code.replace(/\/\/.*$/gm, '');
const raw = new Map(files.map((n) => [n, stripComments(readFileSync(join(SHADER_DIR, `${n}.wgsl`), 'utf8'))]));

/** The uniform fields (as the shader spells them) that carry a code, by file, and whose codes. */
const CODED_FIELDS: { file: string; field: string; prefix: string }[] = [
  { file: 'lib_kl', field: 'estimator', prefix: 'KL_' },
  { file: 'group_advantages', field: 'P.estimator', prefix: 'ADV_' },
  { file: 'policy_loss', field: 'P.mode', prefix: 'LOSS_MODE_' },
  { file: 'lib_policy_term', field: 'clip.mode', prefix: 'LOSS_MODE_' },
  { file: 'aggregate', field: 'F.agg', prefix: 'AGG_' },
];

/** Bodies of every `switch <field> { … }` in code. */
function switchBodies(code: string, field: string): string[] {
  const out: string[] = [];
  const re = new RegExp(`switch\\s*\\(?\\s*${field.replace('.', '\\.')}\\s*\\)?\\s*\\{`, 'g');
  for (const m of code.matchAll(re)) {
    let depth = 0;
    let i = m.index + m[0].length - 1;
    const from = i;
    for (; i < code.length; i++) {
      if (code[i] === '{') depth++;
      else if (code[i] === '}' && --depth === 0) break;
    }
    out.push(code.slice(from, i + 1));
  }
  return out;
}

describe('kernel codes generated into WGSL', () => {
  it('names are distinct WGSL identifiers and codes distinct within each enum', () => {
    const all = [...wgslCodes().keys()];
    expect(new Set(all).size).toBe(all.length);
    for (const n of all) expect(n).toMatch(/^[A-Z][A-Z0-9_]*$/);
    for (const { codes } of WGSL_ENUMS) {
      const values = Object.values(codes);
      expect(new Set(values).size).toBe(values.length);
      for (const v of values) expect(Number.isInteger(v) && v >= 0 && v < 2 ** 32).toBe(true);
    }
    expect(wgslCodeName('KL_', 'k1+')).toBe('KL_K1_PLUS');
    expect(wgslCodeName('AGG_', 'seq-mean-token-mean')).toBe('AGG_SEQ_MEAN_TOKEN_MEAN');
  });

  it('aggCode reaches every AGG code, and the norm scale matters only to seq-mean-token-sum-norm', () => {
    const reached = new Set<number>();
    for (const agg of [...LOSS_AGGS, 'seq-mean-token-mean-all-rows'] as const) {
      const byScale = NORM_SCALES.map((s) => aggCode(agg, s));
      for (const c of byScale) reached.add(c);
      expect(new Set(byScale).size, agg).toBe(agg === 'seq-mean-token-sum-norm' ? 2 : 1);
    }
    expect([...reached].sort()).toEqual(Object.values(AGG_CODE).sort());
  });

  it('every generated name is used by some shader (each code has its WGSL branch)', () => {
    const text = [...raw.values()].join('\n');
    const unused = [...wgslCodes().keys()].filter((n) => !new RegExp(`\\b${n}\\b`).test(text));
    expect(unused).toEqual([]);
  });

  it('no shader declares a generated name itself (a copy)', () => {
    const names = new Set(wgslCodes().keys());
    const copies: string[] = [];
    for (const [file, code] of raw) {
      for (const m of code.matchAll(/\b(?:const|let|var|override)\s+(\w+)/g)) if (names.has(m[1])) copies.push(`${file}: ${m[1]}`);
    }
    expect(copies).toEqual([]);
  });

  it.each(CODED_FIELDS)('$file: $field is compared only with $prefix* names', ({ file, field, prefix }) => {
    const code = raw.get(file)!;
    const f = field.replace('.', '\\.');
    expect(code, `${file} reads ${field}`).toMatch(new RegExp(`\\b${f}\\b`));
    const literal = [...code.matchAll(new RegExp(`\\b${f}\\s*[=!]=\\s*[-\\d]|[\\d.]u?\\s*[=!]=\\s*${f}\\b`, 'g'))].map((m) => m[0]);
    expect(literal, 'comparison with a literal').toEqual([]);
    const compared = [...code.matchAll(new RegExp(`\\b${f}\\s*[=!]=\\s*(\\w+)`, 'g'))].map((m) => m[1]);
    for (const body of switchBodies(code, field)) {
      for (const m of body.matchAll(/\bcase\s+([^:{]+)[:{]/g))
        compared.push(
          ...m[1]
            .split(',')
            .map((s) => s.trim())
            .filter((s) => s !== 'default'),
        );
    }
    expect(compared.length, `${file} branches on ${field}`).toBeGreaterThan(0);
    expect(
      compared.filter((c) => !c.startsWith(prefix) || !wgslCodes().has(c)),
      `${field} compared with something other than ${prefix}*`,
    ).toEqual([]);
  });

  it('shaderSource appends the declarations of the names a shader uses, and only those', () => {
    registerShaders({ t_lib: 'fn f(e: u32) -> bool { return e == KL_K3; }', t_main: '// @include t_lib\nfn g() -> u32 { return AGG_TOKEN_MEAN; }' });
    const src = shaderSource('t_main');
    expect(src.startsWith('fn f(e: u32) -> bool { return e == KL_K3; }\nfn g() -> u32 { return AGG_TOKEN_MEAN; }\n')).toBe(true);
    expect(src).toContain(`const KL_K3: u32 = ${wgslCodes().get('KL_K3')}u;`);
    expect(src).toContain(`const AGG_TOKEN_MEAN: u32 = ${wgslCodes().get('AGG_TOKEN_MEAN')}u;`);
    expect(src.match(/^const /gm)).toHaveLength(2);
    expect(codeDeclarations('fn h() {}')).toBe('');
  });

  it('every real shader keeps its own lines (compiler line numbers) and gets each code it names declared once', () => {
    loadShadersFromDisk();
    for (const name of files.filter((n) => !n.startsWith('lib_'))) {
      const src = shaderSource(name);
      const body = stripComments(src);
      for (const n of wgslCodes().keys()) {
        const decls = body.match(new RegExp(`^const ${n}: u32 = \\d+u;$`, 'gm'))?.length ?? 0;
        expect(decls, `${name}: ${n}`).toBe(new RegExp(`\\b${n}\\b`).test(body.replace(/^const \w+: u32 = \d+u;$/gm, '')) ? 1 : 0);
      }
      const own = readFileSync(join(SHADER_DIR, `${name}.wgsl`), 'utf8').split('\n');
      const firstInclude = own.findIndex((l) => /^[ \t]*\/\/ @include /.test(l));
      const untouched = firstInclude < 0 ? own : own.slice(0, firstInclude);
      expect(src.split('\n').slice(0, untouched.length), name).toEqual(untouched);
    }
  });

  it('the shared limits are declared as f32 from the reference values, and no shader copies them', () => {
    registerShaders({ t_limits: 'fn c(d: f32) -> f32 { return clamp(d, -LOG_RATIO_CLAMP, LOG_RATIO_CLAMP) + GSPO_LOG_RATIO_MAX; }' });
    const src = shaderSource('t_limits');
    expect(src).toContain(`const LOG_RATIO_CLAMP: f32 = ${WGSL_F32_LIMITS.LOG_RATIO_CLAMP}.0;`);
    expect(src).toContain(`const GSPO_LOG_RATIO_MAX: f32 = ${WGSL_F32_LIMITS.GSPO_LOG_RATIO_MAX}.0;`);
    const copies: string[] = [];
    for (const [file, code] of raw) {
      for (const m of code.matchAll(/\b(?:const|let|var|override)\s+(\w+)/g)) if (m[1] in WGSL_F32_LIMITS) copies.push(`${file}: ${m[1]}`);
    }
    expect(copies).toEqual([]);
    const text = [...raw.values()].join('\n');
    for (const n of Object.keys(WGSL_F32_LIMITS)) expect(text, n).toMatch(new RegExp(`\\b${n}\\b`));
  });
});
