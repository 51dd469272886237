// WebGPU in Node through Dawn (the `webgpu` package). Dawn needs a Vulkan driver; on a machine
// without a GPU we point the Vulkan loader at SwiftShader from Debian's chromium package.
import { existsSync } from 'node:fs';
import { acquireDevice, type AcquiredDevice } from '../gpu/device.ts';
import { loadShadersFromDisk } from './shaders.ts';

const SWIFTSHADER_ICD = '/usr/lib/chromium/vk_swiftshader_icd.json';

export async function nodeDevice(onLost?: (info: GPUDeviceLostInfo) => void): Promise<AcquiredDevice> {
  if (!process.env.VK_ICD_FILENAMES && !process.env.PPO_USE_SYSTEM_VULKAN && existsSync(SWIFTSHADER_ICD)) {
    // Only a default: a machine with a real GPU driver sets PPO_USE_SYSTEM_VULKAN=1 (or its own ICD list).
    process.env.VK_ICD_FILENAMES = SWIFTSHADER_ICD;
  }
  const { create, globals } = await import('webgpu');
  Object.assign(globalThis, globals);
  loadShadersFromDisk();
  return acquireDevice({ gpu: create([]) as unknown as GPU, onLost });
}
