// WebGPU in Node through Dawn (the `webgpu` package). Dawn needs a Vulkan driver; on a machine
// without a GPU we point the Vulkan loader at SwiftShader from Debian's chromium package.
// Under Deno the same code runs on Deno's own WebGPU (wgpu, Firefox's implementation): its
// `navigator.gpu`, on whichever Vulkan driver the caller chose (the wgpu tests pick Mesa's lavapipe).
import { existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { acquireDevice, type AcquiredDevice } from '../gpu/device.ts';
import { loadShadersFromDisk } from './shaders.ts';

const SWIFTSHADER_ICD = '/usr/lib/chromium/vk_swiftshader_icd.json';

// Dawn's GPU entry object must outlive every device made from it: if it is garbage collected,
// Dawn aborts the process (mutex/futex assertions). Keep it for the life of the process.
let dawnGpu: GPU | null = null;

/** True when running under Deno rather than Node. */
export const IS_DENO = typeof (globalThis as { Deno?: unknown }).Deno !== 'undefined';

export async function nodeDevice(onLost?: (info: GPUDeviceLostInfo) => void): Promise<AcquiredDevice> {
  if (IS_DENO) {
    // Deno's built-in WebGPU; the Vulkan driver was chosen by the launcher's VK_ICD_FILENAMES.
    loadShadersFromDisk();
    return acquireDevice({ onLost, optionalFeatures: ['timestamp-query'] });
  }
  if (!process.env.VK_ICD_FILENAMES && !process.env.PPO_USE_SYSTEM_VULKAN && existsSync(SWIFTSHADER_ICD)) {
    // Only a default: a machine with a real GPU driver sets PPO_USE_SYSTEM_VULKAN=1 (or its own ICD list).
    process.env.VK_ICD_FILENAMES = SWIFTSHADER_ICD;
  }
  if (!process.env.XDG_RUNTIME_DIR) {
    // The Vulkan loader complains on stderr without one; any private directory will do.
    const dir = join(tmpdir(), `ppo-xdg-${process.getuid?.() ?? 0}`);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    process.env.XDG_RUNTIME_DIR = dir;
  }
  const { create, globals } = await import('webgpu');
  Object.assign(globalThis, globals);
  loadShadersFromDisk();
  dawnGpu ??= create([]) as unknown as GPU;
  // The benchmarks' per-dispatch profile needs timestamp queries; the page asks for no features.
  return acquireDevice({ gpu: dawnGpu, onLost, optionalFeatures: ['timestamp-query'] });
}
