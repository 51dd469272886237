// Node side of the shader registry: reads shaders/*.wgsl from disk, the same files the page bundles.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { registerShaders } from '../gpu/shaders.ts';

export const SHADER_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'shaders');

export function loadShadersFromDisk(dir = SHADER_DIR): void {
  const byName: Record<string, string> = {};
  for (const f of readdirSync(dir)) {
    if (f.endsWith('.wgsl')) byName[f.slice(0, -5)] = readFileSync(join(dir, f), 'utf8');
  }
  registerShaders(byName);
}
