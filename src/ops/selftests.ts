// The page's WebGPU self-test cases, importing only the ops that have one: the self-test worker
// runs before anything else on the page, and importing the registry would load every op (and the
// worker every shader) first. tests/unit/selftests.test.ts checks this list against the registry
// (every op with a self-test case, in registry order) and the worker's shaders against the
// kernels of these ops.
import { kl } from './kl.ts';
import type { AnyOp, SelftestCase } from './op.ts';

/** The ops with a self-test case, in registry order. */
export const SELFTEST_OPS: readonly AnyOp[] = [kl];

export const SELFTESTS: readonly SelftestCase[] = SELFTEST_OPS.flatMap((op) => (op.def.selftest ? [op.def.selftest] : []));
