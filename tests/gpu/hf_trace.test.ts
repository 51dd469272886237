// An own-model iteration as the inspector reads it, on WebGPU: the trace's float32 numbers equal
// the inspector's float64 recomputation from the trace's own inputs within the playground
// capture's tolerances (tests/gpu/inspect_capture.test.ts says where each comes from).
import { describe, it } from 'vitest';
import { F32_CAPTURE } from '../helpers/captureCheck.ts';
import { webgpuBackend } from '../helpers/backends.ts';
import { HF_TRACE_CASES, runHfTracedIterations } from '../helpers/hfTraceCheck.ts';

describe('the inspector’s trace of an own-model iteration (webgpu)', () => {
  it.each(HF_TRACE_CASES)('%s: the trace equals its recomputation', async (_name, c) => {
    await runHfTracedIterations(await webgpuBackend(), c, F32_CAPTURE);
  });
});
