// The definition helper every op module uses. An op is one named-argument type, one check, a
// float64 body (the reference), a WebGPU body (the dispatch of its shader's kernels) and the
// kernels it declares; `defineOp` turns that into the function callers use:
//   const { advantages, returns } = gae(be, { rewards, values, actionMask, gamma, lam });
// The call runs the check, then the backend's body, and records the outputs for `be.scope`.
import type { Backend, OpDef } from '../backend/backend.ts';
import type { KernelSpec } from '../gpu/pipelines.ts';

/** An op's definition: what a backend runs (OpDef) plus what the tools derive from the registry. */
export interface OpSpec<A, R> extends OpDef<A, R> {
  /**
   * Every fixed kernel the WebGPU body dispatches (kernels of other ops it calls are theirs), so
   * they can be compiled ahead of use; a kernel sized per model shape is built on demand instead.
   */
  readonly kernels: readonly KernelSpec[];
}

/** An op: called as `op(be, args)`; `op.def` is its definition (for the registry and the tools). */
export type Op<A, R> = ((be: Backend, args: A) => R) & { readonly def: OpSpec<A, R> };

export function defineOp<A, R>(def: OpSpec<A, R>): Op<A, R> {
  const op = (be: Backend, args: A): R => be.run(def, args);
  return Object.assign(op, { def });
}
