// npm run kernel -- <name> <input.json> [--backend webgpu|cpu]
// Runs one PPO kernel on WebGPU (Node + Dawn) and prints its outputs as JSON on stdout.
import { readFileSync } from 'node:fs';
import type { Backend } from '../backend/backend.ts';
import { makeBackend } from '../node/backend.ts';
import { InputError } from '../ops/kernelInput.ts';
import { KERNEL_NAMES, runKernel } from '../ops/registry.ts';

const USAGE = `usage: npm run kernel -- <name> <input.json|-> [--backend webgpu|cpu]\n  names: ${KERNEL_NAMES.join(', ')}`;

async function main(argv: string[]): Promise<number> {
  const args = argv.filter((a) => !a.startsWith('--'));
  const bi = argv.indexOf('--backend');
  const backendName = bi >= 0 ? argv[bi + 1] : 'webgpu';
  const positional = args.filter((a) => a !== backendName || bi < 0);
  if (positional.length !== 2) {
    console.error(USAGE);
    return 2;
  }
  const [name, file] = positional;
  let text: string;
  try {
    text = readFileSync(file === '-' ? 0 : file, 'utf8');
  } catch (e) {
    console.error(`cannot read ${file}: ${(e as Error).message}`);
    return 2;
  }
  let input: unknown;
  try {
    input = JSON.parse(text);
  } catch (e) {
    console.error(`${file} is not valid JSON (NaN and Infinity are not JSON numbers): ${(e as Error).message}`);
    return 2;
  }
  let be: Backend;
  if (backendName === 'cpu' || backendName === 'webgpu') be = await makeBackend(backendName);
  else {
    console.error(`--backend: "${backendName}" is not one of webgpu, cpu`);
    return 2;
  }
  try {
    const result = await runKernel(be, name, input as Record<string, unknown>);
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return 0;
  } catch (e) {
    if (e instanceof InputError) {
      console.error(`invalid input for "${name}": ${e.message}`);
      return 2;
    }
    console.error(`kernel "${name}" failed: ${(e as Error).message}`);
    return 1;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e) => {
    console.error(e instanceof Error ? e.message : String(e));
    process.exit(1);
  },
);
