// Element-wise ops: GELU and its backward, add, mul, and the in-place axpy, scale and fill.
// Math: shaders/elementwise.wgsl's header; float64 references: src/reference/nn/gelu.ts,
// src/reference/nn/elementwise.ts (the rest is one line each below).
import { expectDType, expectShape, type Tensor } from '../backend/tensor.ts';
import { cpu, CpuTensor } from '../backend/cpu/cpuTensor.ts';
import type { GpuOpsHost } from '../backend/backend.ts';
import { gpu } from '../backend/webgpu/gpuTensor.ts';
import { kernel, type KernelSpec } from '../gpu/pipelines.ts';
import type { BufferRange } from '../gpu/recorder.ts';
import { elementGrid } from '../gpu/runtime.ts';
import { uniformLayout } from '../gpu/uniforms.ts';
import { mulRef } from '../reference/nn/elementwise.ts';
import { geluBackwardRef, geluRef } from '../reference/nn/gelu.ts';
import { defineOp, type Op } from './op.ts';
import { expectSize } from './shapes.ts';

const EW_WG = 256;
const EW_UNIFORM = uniformLayout('Params', { n: 'u32', alpha: 'f32', bits: 'u32' });
const ew = (entry: string, storage: KernelSpec['storage']) => kernel({ shader: 'elementwise', entry, uniform: EW_UNIFORM, storage, constants: { WG: EW_WG } });
const GELU = ew('gelu_forward', ['rw', 'read']);
const GELU_BACKWARD = ew('gelu_backward', ['rw', 'read', 'read']);
const ADD = ew('add', ['rw', 'read', 'read']);
const MUL = ew('mul', ['rw', 'read', 'read']);
const AXPY = ew('axpy', ['rw', 'read']);
const SCALE = ew('scale', ['rw']);
const FILL = ew('fill', ['rw']);

function dispatch(be: GpuOpsHost, spec: typeof GELU, n: number, buffers: BufferRange[], alpha = 0, bits = 0): void {
  be.rt.dispatch(spec, buffers, { n, alpha, bits }, elementGrid(n, EW_WG));
}

/** The f32 or i32 bit pattern of a fill value. */
function fillBits(value: number, dtype: Tensor['dtype']): number {
  const view = new DataView(new ArrayBuffer(4));
  if (dtype === 'i32') view.setInt32(0, Math.trunc(value), true);
  else view.setFloat32(0, value, true);
  return view.getUint32(0, true);
}

/** GELU, tanh approximation (GPT-2): ½x(1 + tanh(√(2/π)(x + 0.044715x³))) → x's shape. */
export const gelu: Op<{ x: Tensor }, Tensor> = defineOp({
  name: 'gelu',
  kernels: [GELU],
  check: null,
  cpu: ({ x }) => new CpuTensor(geluRef(cpu(x).data), [...x.shape], 'f32'),
  webgpu({ x }, be) {
    const y = be.empty(x.shape);
    dispatch(be, GELU, x.size, [gpu(y), gpu(x)]);
    return y;
  },
});

/** gradX = gradY·gelu′(x) → x's shape. */
export const geluBackward: Op<{ gradY: Tensor; x: Tensor }, Tensor> = defineOp({
  name: 'geluBackward',
  kernels: [GELU_BACKWARD],
  check: ({ gradY, x }) => expectShape('geluBackward gradY', gradY, x.shape),
  cpu: ({ gradY, x }) => new CpuTensor(geluBackwardRef(cpu(gradY).data, cpu(x).data), [...x.shape], 'f32'),
  webgpu({ gradY, x }, be) {
    const gradX = be.empty(x.shape);
    dispatch(be, GELU_BACKWARD, x.size, [gpu(gradX), gpu(x), gpu(gradY)]);
    return gradX;
  },
});

/** a + b (same shape) → a new tensor (the residual connection). */
export const add: Op<{ a: Tensor; b: Tensor }, Tensor> = defineOp({
  name: 'add',
  kernels: [ADD],
  check: ({ a, b }) => expectShape('add b', b, a.shape),
  cpu({ a, b }) {
    const x = cpu(a).data;
    const y = cpu(b).data;
    return new CpuTensor(
      Float64Array.from(x, (v, i) => v + y[i]),
      [...a.shape],
      'f32',
    );
  },
  webgpu({ a, b }, be) {
    const y = be.empty(a.shape);
    dispatch(be, ADD, a.size, [gpu(y), gpu(a), gpu(b)]);
    return y;
  },
});

/** a·b (same shape, f32) → a new tensor (e.g. weights ⊙ a per-token gradient). */
export const mul: Op<{ a: Tensor; b: Tensor }, Tensor> = defineOp({
  name: 'mul',
  kernels: [MUL],
  check({ a, b }) {
    expectDType('mul a', a, 'f32');
    expectDType('mul b', b, 'f32');
    expectShape('mul b', b, a.shape);
  },
  cpu: ({ a, b }) => new CpuTensor(mulRef(cpu(a).data, cpu(b).data), [...a.shape], 'f32'),
  webgpu({ a, b }, be) {
    const y = be.empty(a.shape);
    dispatch(be, MUL, a.size, [gpu(y), gpu(a), gpu(b)]);
    return y;
  },
});

/** In place: y += alpha·x (same size). */
export const axpy: Op<{ alpha: number; x: Tensor; y: Tensor }, void> = defineOp({
  name: 'axpy',
  kernels: [AXPY],
  check: ({ x, y }) => expectSize('axpy y', y, x.size),
  cpu({ alpha, x, y }) {
    const xs = cpu(x).data;
    const ys = cpu(y).data;
    for (let i = 0; i < ys.length; i++) ys[i] += alpha * xs[i];
  },
  webgpu: ({ alpha, x, y }, be) => dispatch(be, AXPY, x.size, [gpu(y), gpu(x)], alpha),
});

/** In place: x ← alpha·x. */
export const scale: Op<{ x: Tensor; alpha: number }, void> = defineOp({
  name: 'scale',
  kernels: [SCALE],
  check: null,
  cpu({ x, alpha }) {
    const xs = cpu(x).data;
    for (let i = 0; i < xs.length; i++) xs[i] *= alpha;
  },
  webgpu: ({ x, alpha }, be) => dispatch(be, SCALE, x.size, [gpu(x)], alpha),
});

/** In place: every element ← value (f32 or i32). */
export const fill: Op<{ x: Tensor; value: number }, void> = defineOp({
  name: 'fill',
  kernels: [FILL],
  check: null,
  cpu: ({ x, value }) => void cpu(x).data.fill(x.dtype === 'i32' ? Math.trunc(value) : value),
  webgpu: ({ x, value }, be) => dispatch(be, FILL, x.size, [gpu(x)], 0, fillBits(value, x.dtype)),
});
