// Registry of WGSL sources by file name (without `.wgsl`). The page registers them through
// Vite's `?raw` glob; Node reads the same files from `shaders/` (see src/node/shaders.ts). Both get
// their source through shaderSource, which expands includes and declares the kernel codes.
import { WGSL_F32_LIMITS, wgslCodes } from '../reference/kernelCodes.ts';

const sources = new Map<string, string>();

export function registerShaders(byName: Record<string, string>): void {
  for (const [name, code] of Object.entries(byName)) sources.set(name, code);
}

/** Accepts the record `import.meta.glob('/shaders/*.wgsl', {query: '?raw', import: 'default', eager: true})` returns. */
export function registerShaderGlob(glob: Record<string, string>): void {
  const byName: Record<string, string> = {};
  for (const [path, code] of Object.entries(glob)) {
    const base = path
      .split('/')
      .pop()!
      .replace(/\.wgsl$/, '');
    byName[base] = code;
  }
  registerShaders(byName);
}

function rawSource(name: string): string {
  const code = sources.get(name);
  if (code === undefined) {
    throw new Error(`WGSL shader "${name}" is not registered (known: ${[...sources.keys()].join(', ') || 'none'})`);
  }
  return code;
}

/**
 * WGSL has no includes: a line `// @include <name>` is replaced by shaders/<name>.wgsl (once per
 * shader, recursively), so shared math such as the KL estimators lives in one file.
 */
function expandIncludes(name: string, seen: Set<string>): string {
  return rawSource(name).replace(/^[ \t]*\/\/ @include ([\w-]+)[ \t]*$/gm, (_line, dep: string) => {
    if (seen.has(dep)) return `// (${dep} already included)`;
    seen.add(dep);
    return expandIncludes(dep, seen);
  });
}

/**
 * The WGSL `const` declarations of the kernel codes and shared limits (src/reference/kernelCodes.ts)
 * that `code` names outside comments, e.g. `const KL_K3: u32 = 3u;`, `const LOG_RATIO_CLAMP: f32 =
 * 20.0;`. WGSL module-scope declarations may follow their use, so they are appended: compiler
 * messages keep the line numbers of the shader's file.
 */
export function codeDeclarations(code: string): string {
  const uncommented = code.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');
  const used = new Set(uncommented.match(/\b[A-Z][A-Z0-9_]*\b/g) ?? []);
  const lines = [
    ...[...wgslCodes()].filter(([n]) => used.has(n)).map(([n, v]) => `const ${n}: u32 = ${v}u;`),
    ...Object.entries(WGSL_F32_LIMITS)
      .filter(([n]) => used.has(n))
      .map(([n, v]) => `const ${n}: f32 = ${wgslF32(v)};`),
  ];
  return lines.length ? `\n// Kernel codes generated from src/reference/kernelCodes.ts.\n${lines.join('\n')}\n` : '';
}

/** A WGSL f32 literal that reads back as exactly `v` (v must be representable in float32). */
function wgslF32(v: number): string {
  if (Math.fround(v) !== v) throw new Error(`kernel limit ${v} is not a float32 value`);
  const t = String(v);
  return /[.e]/.test(t) ? t : `${t}.0`;
}

/**
 * `code` with each of `constants` set as the value of the module-scope `const` of that name, in
 * place on its own line (compiler line numbers stay those of the file), e.g. `const WG: u32 =
 * 64u;` becomes `const WG: u32 = 256u;`. Workgroup sizes and workgroup array lengths are such
 * consts, not `override`s: Safari was seen to size a workgroup array by an override as 0 (the
 * kernel ran and wrote nothing, with no error), so each variant gets its own source instead of
 * pipeline constants. A name the source declares no such const for is an error (a typo would
 * otherwise leave the default in force).
 */
export function specializeConstants(code: string, constants: Readonly<Record<string, number>> = {}): string {
  let out = code;
  for (const [name, value] of Object.entries(constants)) {
    if (!/^[A-Za-z_]\w*$/.test(name)) throw new Error(`constant name ${JSON.stringify(name)} is not a WGSL identifier`);
    const decl = new RegExp(`^const ${name}[ \\t]*:[ \\t]*(u32|i32|f32)[ \\t]*=[^;\\n]*;`, 'gm');
    let found = 0;
    out = out.replace(decl, (_m, type: string) => {
      found++;
      return `const ${name}: ${type} = ${wgslLiteral(name, type, value)};`;
    });
    if (found !== 1) throw new Error(`constant ${name}: the shader declares ${found} module-scope \`const ${name}\` (want 1)`);
  }
  return out;
}

function wgslLiteral(name: string, type: string, v: number): string {
  if (type === 'f32') return wgslF32(v);
  const ok = Number.isInteger(v) && (type === 'u32' ? v >= 0 && v <= 0xffffffff : v >= -(2 ** 31) && v < 2 ** 31);
  if (!ok) throw new Error(`constant ${name} = ${v} is not a ${type}`);
  return `${v}${type === 'u32' ? 'u' : 'i'}`;
}

/**
 * A shader's full source: its file with includes expanded, `constants` set (specializeConstants)
 * and the kernel codes it uses declared.
 */
export function shaderSource(name: string, constants?: Readonly<Record<string, number>>): string {
  const code = specializeConstants(expandIncludes(name, new Set([name])), constants);
  return code + codeDeclarations(code);
}
