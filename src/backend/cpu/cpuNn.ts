import type { NnOps } from '../nnOps.ts';
import { stubOps } from '../stub.ts';

export const CpuNnOps = class {
  constructor() {
    return stubOps<NnOps>('nn', 'CPU');
  }
} as unknown as new () => NnOps;
