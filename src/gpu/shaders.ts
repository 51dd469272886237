// Registry of WGSL sources by file name (without `.wgsl`). The page registers them through
// Vite's `?raw` glob; Node reads the same files from `shaders/` (see src/node/shaders.ts).

const sources = new Map<string, string>();

export function registerShaders(byName: Record<string, string>): void {
  for (const [name, code] of Object.entries(byName)) sources.set(name, code);
}

/** Accepts the record `import.meta.glob('/shaders/*.wgsl', {query: '?raw', import: 'default', eager: true})` returns. */
export function registerShaderGlob(glob: Record<string, string>): void {
  const byName: Record<string, string> = {};
  for (const [path, code] of Object.entries(glob)) {
    const base = path.split('/').pop()!.replace(/\.wgsl$/, '');
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
export function shaderSource(name: string, seen: Set<string> = new Set([name])): string {
  return rawSource(name).replace(/^[ \t]*\/\/ @include ([\w-]+)[ \t]*$/gm, (_line, dep: string) => {
    if (seen.has(dep)) return `// (${dep} already included)`;
    seen.add(dep);
    return shaderSource(dep, seen);
  });
}
