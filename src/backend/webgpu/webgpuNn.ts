import type { NnOps } from '../nnOps.ts';
import { stubOps } from '../stub.ts';
import type { WebGpuBackend } from './webgpuBackend.ts';

export const WebGpuNnOps = class {
  constructor(_be: WebGpuBackend) {
    return stubOps<NnOps>('nn', 'WebGPU');
  }
} as unknown as new (be: WebGpuBackend) => NnOps;
