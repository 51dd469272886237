// The gated MLP activation silu(gate)·up of Llama/Qwen and its backward, on separate gate and up
// tensors or on one (M, 2F) gate|up product. Math: shaders/swiglu.wgsl's header; float64
// reference: src/reference/nn/swiglu.ts.
import { expectDType, expectShape, type Tensor } from '../backend/tensor.ts';
import { cpu, CpuTensor } from '../backend/cpu/cpuTensor.ts';
import { gpu } from '../backend/webgpu/gpuTensor.ts';
import { kernel } from '../gpu/pipelines.ts';
import { elementGrid } from '../gpu/runtime.ts';
import { uniformLayout } from '../gpu/uniforms.ts';
import { swigluBackwardRef, swigluRef } from '../reference/nn/swiglu.ts';
import { hfBenchInputs, HF_BENCH } from './hfBench.ts';
import { linear } from './linear.ts';
import { defineOp, type Op } from './op.ts';
import { lastDim, rowsCols } from './shapes.ts';

export interface SwigluArgs {
  gate: Tensor; // (M, F) f32 (leading dims are rows): gate_proj(x)
  up: Tensor; // gate's shape, f32: up_proj(x)
}

export interface SwigluBackwardArgs {
  gradY: Tensor; // gate's shape, f32
  gate: Tensor; // (M, F) f32, the forward's
  up: Tensor; // gate's shape, f32, the forward's
}

export interface SwigluBackwardResult {
  gradGate: Tensor; // gate's shape, f32
  gradUp: Tensor; // gate's shape, f32
}

export interface SwigluFusedArgs {
  gateUp: Tensor; // (M, 2F) f32: each row is gate_proj(x) then up_proj(x), one product of the stacked weights
}

export interface SwigluFusedBackwardArgs {
  gradY: Tensor; // (M, F) f32
  gateUp: Tensor; // (M, 2F) f32, the forward's
}

const WG = 256;
const UNIFORM = uniformLayout('Params', { M: 'u32', F: 'u32' });
const SWIGLU = kernel({ shader: 'swiglu', entry: 'swiglu', uniform: UNIFORM, storage: ['read', 'read', 'rw'], constants: { WG } });
const SWIGLU_BACKWARD = kernel({ shader: 'swiglu', entry: 'swiglu_backward', uniform: UNIFORM, storage: ['read', 'read', 'read', 'rw', 'rw'], constants: { WG } });
const SWIGLU_FUSED = kernel({ shader: 'swiglu', entry: 'swiglu_fused', uniform: UNIFORM, storage: ['read', 'rw'], constants: { WG } });
const SWIGLU_FUSED_BACKWARD = kernel({ shader: 'swiglu', entry: 'swiglu_fused_backward', uniform: UNIFORM, storage: ['read', 'read', 'rw'], constants: { WG } });

function checkPair(op: string, gate: Tensor, up: Tensor, gradY: Tensor | null): void {
  expectDType(`${op} gate`, gate, 'f32');
  lastDim(`${op} gate`, gate);
  expectShape(`${op} up`, up, gate.shape);
  expectDType(`${op} up`, up, 'f32');
  if (gradY) {
    expectShape(`${op} gradY`, gradY, gate.shape);
    expectDType(`${op} gradY`, gradY, 'f32');
  }
}

/** (M, F, the output shape) of a checked (…, 2F) gate|up tensor. */
function fusedDims(gateUp: Tensor): { M: number; F: number; shape: number[] } {
  const { rows, cols } = rowsCols(gateUp);
  return { M: rows, F: cols / 2, shape: [...gateUp.shape.slice(0, -1), cols / 2] };
}

function checkFused(op: string, gateUp: Tensor): void {
  expectDType(`${op} gateUp`, gateUp, 'f32');
  const cols = lastDim(`${op} gateUp`, gateUp);
  if (cols % 2 !== 0) throw new Error(`${op} gateUp: expected (M, 2F) with gate then up in each row, got an odd last dimension ${cols}`);
}

/** y = silu(gate)·up. */
export const swiglu: Op<SwigluArgs, Tensor> = defineOp({
  name: 'swiglu',
  kernels: [SWIGLU],
  check: ({ gate, up }) => checkPair('swiglu', gate, up, null),
  cpu: ({ gate, up }) => new CpuTensor(swigluRef(cpu(gate).data, cpu(up).data), [...gate.shape], 'f32'),
  webgpu({ gate, up }, be) {
    const { rows: M, cols: F } = rowsCols(gate);
    const y = be.empty(gate.shape);
    if (M * F > 0) be.rt.dispatch(SWIGLU, [gpu(gate), gpu(up), gpu(y)], { M, F }, elementGrid(M * F, WG));
    return y;
  },
  bench: {
    // The MLP's input side as two projections: compare with swigluFused's row.
    label: `MLP in, 2 linear f16 + swiglu (${HF_BENCH.D} → ${HF_BENCH.F})`,
    run: (be, b) => {
      const h = hfBenchInputs(be, b);
      return be.scope(() => swiglu(be, { gate: linear(be, { x: h.x, weight: h.wUp16 }), up: linear(be, { x: h.x, weight: h.wUp16 }) }));
    },
  },
});

/** gradGate = gradY·up·silu'(gate), gradUp = gradY·silu(gate). */
export const swigluBackward: Op<SwigluBackwardArgs, SwigluBackwardResult> = defineOp({
  name: 'swigluBackward',
  kernels: [SWIGLU_BACKWARD],
  check: ({ gradY, gate, up }) => checkPair('swigluBackward', gate, up, gradY),
  cpu({ gradY, gate, up }) {
    const g = swigluBackwardRef(cpu(gradY).data, cpu(gate).data, cpu(up).data);
    return { gradGate: new CpuTensor(g.gradGate, [...gate.shape], 'f32'), gradUp: new CpuTensor(g.gradUp, [...gate.shape], 'f32') };
  },
  webgpu({ gradY, gate, up }, be) {
    const { rows: M, cols: F } = rowsCols(gate);
    const gradGate = be.empty(gate.shape);
    const gradUp = be.empty(gate.shape);
    if (M * F > 0) be.rt.dispatch(SWIGLU_BACKWARD, [gpu(gate), gpu(up), gpu(gradY), gpu(gradGate), gpu(gradUp)], { M, F }, elementGrid(M * F, WG));
    return { gradGate, gradUp };
  },
  bench: {
    label: `swigluBackward (F ${HF_BENCH.F})`,
    run: (be, b) => {
      const h = hfBenchInputs(be, b);
      return swigluBackward(be, { gradY: h.gradF, gate: h.gate, up: h.up });
    },
  },
});

/** y (M, F) = silu(gate)·up of a (M, 2F) gate|up product. */
export const swigluFused: Op<SwigluFusedArgs, Tensor> = defineOp({
  name: 'swigluFused',
  kernels: [SWIGLU_FUSED],
  check: ({ gateUp }) => checkFused('swigluFused', gateUp),
  cpu({ gateUp }) {
    const { M, F, shape } = fusedDims(gateUp);
    const { gate, up } = splitRows(cpu(gateUp).data, M, F);
    return new CpuTensor(swigluRef(gate, up), shape, 'f32');
  },
  webgpu({ gateUp }, be) {
    const { M, F, shape } = fusedDims(gateUp);
    const y = be.empty(shape);
    if (M * F > 0) be.rt.dispatch(SWIGLU_FUSED, [gpu(gateUp), gpu(y)], { M, F }, elementGrid(M * F, WG));
    return y;
  },
  bench: {
    // One projection by the stacked [gate; up] weight, then the fused activation.
    label: `MLP in, linear f16 (2F) + swigluFused (${HF_BENCH.D} → ${HF_BENCH.F})`,
    run: (be, b) => {
      const h = hfBenchInputs(be, b);
      return be.scope(() => swigluFused(be, { gateUp: linear(be, { x: h.x, weight: h.wGateUp16 }) }));
    },
  },
});

/** The gradient of the (M, 2F) gate|up product: gradGate in columns [0, F), gradUp in [F, 2F). */
export const swigluFusedBackward: Op<SwigluFusedBackwardArgs, Tensor> = defineOp({
  name: 'swigluFusedBackward',
  kernels: [SWIGLU_FUSED_BACKWARD],
  check({ gradY, gateUp }) {
    checkFused('swigluFusedBackward', gateUp);
    expectShape('swigluFusedBackward gradY', gradY, fusedDims(gateUp).shape);
    expectDType('swigluFusedBackward gradY', gradY, 'f32');
  },
  cpu({ gradY, gateUp }) {
    const { M, F } = fusedDims(gateUp);
    const { gate, up } = splitRows(cpu(gateUp).data, M, F);
    const g = swigluBackwardRef(cpu(gradY).data, gate, up);
    const out = new Float64Array(M * 2 * F);
    for (let m = 0; m < M; m++) {
      out.set(g.gradGate.subarray(m * F, (m + 1) * F), m * 2 * F);
      out.set(g.gradUp.subarray(m * F, (m + 1) * F), m * 2 * F + F);
    }
    return new CpuTensor(out, [...gateUp.shape], 'f32');
  },
  webgpu({ gradY, gateUp }, be) {
    const { M, F } = fusedDims(gateUp);
    const grad = be.empty(gateUp.shape);
    if (M * F > 0) be.rt.dispatch(SWIGLU_FUSED_BACKWARD, [gpu(gateUp), gpu(gradY), gpu(grad)], { M, F }, elementGrid(M * F, WG));
    return grad;
  },
  bench: {
    label: `swigluFusedBackward (2F ${2 * HF_BENCH.F})`,
    run: (be, b) => {
      const h = hfBenchInputs(be, b);
      return swigluFusedBackward(be, { gradY: h.gradF, gateUp: h.gateUp });
    },
  },
});

/** The gate and up halves of each (2F) row, as (M, F) arrays. */
function splitRows(gateUp: Float64Array, M: number, F: number): { gate: Float64Array; up: Float64Array } {
  const gate = new Float64Array(M * F);
  const up = new Float64Array(M * F);
  for (let m = 0; m < M; m++) {
    gate.set(gateUp.subarray(m * 2 * F, m * 2 * F + F), m * F);
    up.set(gateUp.subarray(m * 2 * F + F, (m + 1) * 2 * F), m * F);
  }
  return { gate, up };
}
