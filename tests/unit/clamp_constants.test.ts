// Every log-ratio and KL clamp comes from a named shared constant (LOG_RATIO_CLAMP,
// GSPO_LOG_RATIO_MAX in src/reference/policyLoss.ts; KL_LOG_RATIO_CLAMP, KL_K3_CLAMP in
// src/reference/kl.ts; in WGSL through WGSL_F32_LIMITS), so a kernel, its float64 reference and
// the host cannot disagree about where a clamp starts. This reads shaders/ and src/ for clamps
// written with a literal ±20 or ±10 and fails on any it does not list below.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, sourceFiles } from '../helpers/sourceFiles.ts';

/** Comments removed, line breaks kept (so hits report their line). */
function stripComments(src: string): string {
  return src.replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, '')).replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
}

const LIT = String.raw`-?\s*(?:10|20)(?:\.0)?\b`; // ±10, ±20, as TS or WGSL f32 literals
const ARG = String.raw`[^,()]*(?:\([^()]*\)[^,()]*)*`; // one call argument (one level of parentheses)

/** Clamp shapes that mean "a literal ±10/±20 limit", anywhere in src/ or shaders/. */
const CLAMP_SHAPES: [string, RegExp][] = [
  ['two-sided clamp()', new RegExp(String.raw`\bclamp\(${ARG},\s*${LIT}\s*,\s*${LIT}\s*\)`, 'g')],
  ['min/max with a literal around min/max', new RegExp(String.raw`\b(?:min|max)\(\s*${LIT}\s*,\s*(?:Math\.)?(?:min|max)\(`, 'g')],
  ['min/max of min/max and a literal', new RegExp(String.raw`\b(?:min|max)\(\s*(?:Math\.)?(?:min|max)\([^()]*\)\s*,\s*${LIT}\s*\)`, 'g')],
  ['one-sided clamp before exp', new RegExp(String.raw`\bexp\(\s*(?:Math\.)?(?:min|max)\((?:\s*${LIT}\s*,|${ARG},\s*${LIT}\s*\))`, 'g')],
  ['range test against a literal limit', /[<>]=?\s*-\s*(?:10|20)(?:\.0)?\b\s*\|\|\s*[\w.]+\s*[<>]=?\s*(?:10|20)(?:\.0)?\b/g],
];

/**
 * In the numerical code (kernels, their references, the backends) any comparison with ±10/±20 is a
 * clamp's activity test (e.g. k3's gradient is 0 where its clamp binds); elsewhere such numbers
 * are window sizes and display thresholds.
 */
const NUMERIC_DIRS = ['shaders/', 'src/reference/', 'src/backend/', 'src/gpu/'];
// `<< 10` and `>>> 10` are bit shifts (float16 bit packing), not comparisons.
const COMPARISON = new RegExp(String.raw`(?<![<>])[<>](?![<>])=?\s*${LIT}(?![.\w])`, 'g');

/** The lines of `src` holding a literal clamp, each once, as { file, line number, the line's code }. */
function literalClamps(file: string, src: string): { file: string; line: number; text: string }[] {
  const code = stripComments(src);
  const lines = code.split('\n');
  const shapes: RegExp[] = CLAMP_SHAPES.map(([, re]) => re);
  if (NUMERIC_DIRS.some((d) => file.startsWith(d))) shapes.push(COMPARISON);
  const at = new Set<number>();
  for (const re of shapes) for (const m of code.matchAll(re)) at.add(code.slice(0, m.index).split('\n').length);
  return [...at].sort((a, b) => a - b).map((line) => ({ file, line, text: lines[line - 1].trim() }));
}

describe('clamps come from the shared constants', () => {
  it('the patterns catch the literal clamps they are meant to (and not the named ones)', () => {
    const caught = (file: string, line: string) => literalClamps(file, line).length > 0;
    expect(caught('shaders/x.wgsl', 'let dc = clamp(d, -20.0, 20.0);')).toBe(true);
    expect(caught('shaders/x.wgsl', 'return clamp(exp(-dc) + dc - 1.0, -10.0, 10.0);')).toBe(true);
    expect(caught('src/x.ts', 'const r = Math.exp(Math.min(20, Math.max(-20, lp - old)));')).toBe(true);
    expect(caught('src/x.ts', 'const r = Math.max(-20, Math.min(20, d));')).toBe(true);
    expect(caught('src/x.ts', 'const r = Math.min(Math.max(d, -20), 20);')).toBe(true);
    expect(caught('src/x.ts', 'ratios.push(Math.exp(Math.min(10, d / n)));')).toBe(true);
    expect(caught('src/x.ts', 'ratio = exp(min(seq_log_ratio, 10.0));')).toBe(true);
    expect(caught('src/x.ts', 'if (d < -20 || d > 20) return 0;')).toBe(true);
    expect(caught('src/reference/x.ts', 'if (v > 10) return 0;')).toBe(true);
    expect(caught('shaders/x.wgsl', 'if (e + d - 1.0 > 10.0) { return 0.0; }')).toBe(true);
    expect(caught('shaders/x.wgsl', 'let dc = clamp(d, -LOG_RATIO_CLAMP, LOG_RATIO_CLAMP);')).toBe(false);
    expect(caught('src/x.ts', 'const dc = Math.min(LOG_RATIO_CLAMP, Math.max(-LOG_RATIO_CLAMP, d));')).toBe(false);
    expect(caught('src/x.ts', '// clamp(d, -20, 20) in a comment')).toBe(false);
    expect(caught('src/x.ts', 'const window = Math.min(10, Math.floor(i / 2));')).toBe(false);
    expect(caught('src/ui/x.ts', 'if (s < 10) return label;')).toBe(false);
    expect(caught('shaders/x.wgsl', 'for (var i = 0u; i < 10u; i++) {}')).toBe(false);
    expect(caught('src/backend/x.ts', 'let keep = (e << 10) | (mant >>> 13);')).toBe(false);
    expect(caught('src/backend/x.ts', 'const exp = (h >>> 10) & 0x1f;')).toBe(false);
    expect(caught('src/backend/x.ts', 'if (d >= 10) return 0;')).toBe(true);
  });

  it('no literal ±20 / ±10 clamp in shaders/ or src/', () => {
    const files = ['shaders', 'src'].flatMap((d) => sourceFiles(d, /\.(ts|tsx|wgsl)$/));
    const hits = files.flatMap((f) => literalClamps(f, readFileSync(join(ROOT, f), 'utf8')));
    expect(hits.map((h) => `${h.file}:${h.line}: ${h.text}`)).toEqual([]);
  });
});
