import type { SeqOps } from '../seqOps.ts';
import { stubOps } from '../stub.ts';

export const CpuSeqOps = class {
  constructor() {
    return stubOps<SeqOps>('seq', 'CPU');
  }
} as unknown as new () => SeqOps;
