import type { SeqOps } from '../seqOps.ts';
import { stubOps } from '../stub.ts';
import type { WebGpuBackend } from './webgpuBackend.ts';

export const WebGpuSeqOps = class {
  constructor(_be: WebGpuBackend) {
    return stubOps<SeqOps>('seq', 'WebGPU');
  }
} as unknown as new (be: WebGpuBackend) => SeqOps;
