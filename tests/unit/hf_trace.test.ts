// An own-model iteration as the inspector reads it, on the float64 CPU backend: every number of
// its trace equals the inspector's float64 recomputation within 1e-10 (one set of float64
// operations against another), the own-model panel's metrics and clip marks are the trace's, and
// in at least one case the later steps clip (so the clip fractions and sides are checked on
// tokens that clip). Check and tolerances: tests/helpers/hfTraceCheck.ts.
import { describe, expect, it } from 'vitest';
import { cpuTraceBackend, F64_TRACE, HF_TRACE_CASES, runHfTracedIterations } from '../helpers/hfTraceCheck.ts';

describe('the inspector’s trace of an own-model iteration (float64)', () => {
  it.each(HF_TRACE_CASES)('%s: the trace equals its recomputation', async (_name, c) => {
    const { clipped } = await runHfTracedIterations(cpuTraceBackend(), c, F64_TRACE);
    expect(clipped, 'tokens clipped in the last epochs').toBeGreaterThan(0);
  });
});
