#!/usr/bin/env node
// `npm run test:wgpu`: the gpu tests on a second WebGPU implementation — wgpu, Firefox's, through
// Deno's built-in WebGPU (Deno from the `deno` npm package) on Mesa's lavapipe Vulkan driver
// (Debian: mesa-vulkan-drivers). Runs tests/wgpu/run.ts, which prints "wgpu: N passed, N failed"
// and writes .reports/wgpu.json; the cross-engine test trains a preset on Dawn (a Node child, on the
// Vulkan driver the Node tests use) and on wgpu and compares them (.reports/cross-*.json).
// Environment: PPO_DENO (a deno binary), PPO_WGPU_VK_ICD (another Vulkan ICD for wgpu).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const REPORTS = process.env.PPO_REPORTS ?? '.reports';
const SWIFTSHADER_ICD = '/usr/lib/chromium/vk_swiftshader_icd.json';
const ICD_DIR = '/usr/share/vulkan/icd.d';

/** Mesa's lavapipe ICD file (lvp_icd.<arch>.json), or null. */
export function lavapipeIcd() {
  if (!existsSync(ICD_DIR)) return null;
  const f = readdirSync(ICD_DIR).find((n) => /^lvp_icd\..*\.json$/.test(n));
  return f ? join(ICD_DIR, f) : null;
}

function denoBinary() {
  if (process.env.PPO_DENO) return process.env.PPO_DENO;
  const local = join('node_modules', '.bin', process.platform === 'win32' ? 'deno.cmd' : 'deno');
  return existsSync(local) ? local : 'deno';
}

const icd = process.env.PPO_WGPU_VK_ICD ?? lavapipeIcd();
if (!icd) {
  console.error(`wgpu tests: no lavapipe Vulkan driver (${ICD_DIR}/lvp_icd.*.json); on Debian/Ubuntu: sudo apt-get install -y mesa-vulkan-drivers`);
  process.exit(2);
}
mkdirSync(REPORTS, { recursive: true });
// DENO_WEBGPU_BACKEND: wgpu's Vulkan backend only (on Linux it would also try OpenGL, which Mesa
// also runs on llvmpipe), so the adapter is lavapipe or nothing.
const env = {
  ...process.env,
  VK_ICD_FILENAMES: icd,
  DENO_WEBGPU_BACKEND: process.env.DENO_WEBGPU_BACKEND ?? 'vulkan',
  PPO_NODE: process.execPath,
  PPO_REPORTS: REPORTS,
  DENO_NO_UPDATE_CHECK: '1',
};
// The cross-engine test's Dawn child: the driver the Node tests were given, else SwiftShader.
env.PPO_DAWN_VK_ICD = process.env.VK_ICD_FILENAMES ?? (existsSync(SWIFTSHADER_ICD) ? SWIFTSHADER_ICD : '');
if (!env.PPO_DAWN_VK_ICD) delete env.PPO_DAWN_VK_ICD;
if (!env.XDG_RUNTIME_DIR) {
  // The Vulkan loader complains on stderr without one; any private directory will do.
  env.XDG_RUNTIME_DIR = join(tmpdir(), `ppo-xdg-${process.getuid?.() ?? 0}`);
  mkdirSync(env.XDG_RUNTIME_DIR, { recursive: true, mode: 0o700 });
}
env.TEST_SEED ??= String((Date.now() ^ (Math.random() * 2 ** 31)) >>> 0);

const deno = denoBinary();
const args = [
  'run',
  '--allow-read',
  '--allow-write',
  '--allow-env',
  '--allow-run',
  '--allow-sys',
  '--config',
  'tests/wgpu/deno.json',
  'tests/wgpu/run.ts',
  '--json',
  join(REPORTS, 'wgpu.json'),
  ...process.argv.slice(2),
];
console.log(`${deno} ${args.join(' ')}  (VK_ICD_FILENAMES=${icd}, TEST_SEED=${env.TEST_SEED})`);
const r = spawnSync(deno, args, { stdio: 'inherit', env });
if (r.error) {
  console.error(`wgpu tests: cannot start Deno (${deno}): ${r.error.message} — run npm install (the deno package is a devDependency) or set PPO_DENO`);
  process.exit(2);
}
process.exit(r.status ?? 1);
