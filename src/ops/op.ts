// The definition helper every op module uses. An op is one named-argument type, one check, a
// float64 body (the reference), a WebGPU body (the dispatch of its shader's kernels) and the
// kernels it declares; `defineOp` turns that into the function callers use:
//   const { advantages, returns } = gae(be, { rewards, values, actionMask, gamma, lam });
// The call runs the check, then the backend's body, and records the outputs for `be.scope`.
// The optional parts feed the tools the registry (registry.ts) derives: `npm run kernel`, the
// fuzz campaign, `npm run bench` and the page's WebGPU self-test.
import type { Backend, OpDef } from '../backend/backend.ts';
import type { KernelSpec } from '../gpu/pipelines.ts';
import type { BenchBatch } from './benchBatch.ts';
import type { JsonInput } from './kernelInput.ts';

/** `npm run kernel <name> input.json`: the op on a JSON object of named inputs, its outputs as JSON. */
export interface JsonKernel {
  /** The name on the command line (snake_case, as the verl function it mirrors). */
  readonly name: string;
  /** Parses `input` (an InputError names a bad field), runs the op, reads the outputs back. */
  readonly run: (be: Backend, input: JsonInput) => Promise<Record<string, unknown>>;
}

/** A row of `npm run bench -- --only kernels`: the op once on the benchmark's batch. */
export interface BenchCase {
  readonly label: string;
  /** Records the op; the tensors it returns are disposed after timing. */
  readonly run: (be: Backend, x: BenchBatch) => unknown;
}

/** The page's WebGPU self-test: the op on fixed inputs beside its float64 reference. */
export interface SelftestCase {
  readonly label: string;
  readonly run: (be: Backend) => Promise<{ values: number[]; reference: number[] }>;
}

/** An op's definition: what a backend runs (OpDef) plus what the registry derives from it. */
export interface OpSpec<A, R> extends OpDef<A, R> {
  /**
   * Every fixed kernel the WebGPU body dispatches itself (those of other ops it calls are theirs),
   * so they can be compiled ahead of use; a kernel sized per model shape is built on demand instead.
   */
  readonly kernels: readonly KernelSpec[];
  readonly json?: JsonKernel;
  readonly bench?: BenchCase;
  readonly selftest?: SelftestCase;
}

/** An op: called as `op(be, args)`; `op.def` is its definition (for the registry and the tools). */
export type Op<A, R> = ((be: Backend, args: A) => R) & { readonly def: OpSpec<A, R> };

/** Any op, for lists: its definition's parts that do not depend on its argument and result types. */
export type AnyOp = { readonly def: OpSpec<never, unknown> };

export function defineOp<A, R>(def: OpSpec<NoInfer<A>, NoInfer<R>>): Op<A, R> {
  const op = (be: Backend, args: A): R => be.run(def, args);
  return Object.assign(op, { def });
}
