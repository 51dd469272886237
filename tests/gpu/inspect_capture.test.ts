// A captured iteration on WebGPU: every number the inspector shows equals its float64
// recomputation from the trace's inputs (the device's own float32 tensors) within the kernel
// tests' tolerances: per-token terms TOL.elem (tests/gpu/kl.test.ts, rewards.test.ts), the
// reverse scan rtol/atol 1e-5 (gae.test.ts: A float32 terms of size ~1), losses and approx KL
// TOL.reduce (policy_loss.test.ts, value_loss.test.ts). Whitened advantages take the scan's
// absolute error times 1/σ (captureCheck.ts). Clip fractions are counts over n tokens divided in
// float32, so 1e-6 absolute catches a single miscounted token. The first update step's π_new,
// per token, equals π_old within TOL.elem: two forwards of the same weights (captureCheck.ts).
import { describe, it } from 'vitest';
import { CAPTURE_CASES, F32_CAPTURE, runCapturedIterations } from '../helpers/captureCheck.ts';
import { webgpuBackend } from '../helpers/backends.ts';

describe('iteration capture (webgpu)', () => {
  it.each(CAPTURE_CASES)('%s: the trace equals its float64 recomputation', async (_name, over) => {
    await runCapturedIterations(await webgpuBackend(), over, F32_CAPTURE);
  });
});
