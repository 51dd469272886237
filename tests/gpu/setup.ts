// Every GPU test file starts by acquiring the Dawn device: a missing adapter fails the suite loudly.
import { beforeAll } from 'vitest';
import { webgpuBackend } from '../helpers/backends.ts';

beforeAll(async () => {
  const be = await webgpuBackend();
  if (!be.rt.device) throw new Error('no WebGPU device');
});
