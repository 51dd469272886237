// Rotary position embeddings (Llama, Qwen2, Qwen3) on q or k rows and the backward (the inverse
// rotation). Math and the angle's precision: shaders/rope.wgsl's header; float64 reference:
// src/reference/nn/rope.ts. The frequencies are made once per model by ropeFrequencies from the
// reference's ropeInvFreq (θ and llama3 scaling), as fixed-point turns per position.
import { expectDType, type Tensor } from '../backend/tensor.ts';
import { cpu, CpuTensor } from '../backend/cpu/cpuTensor.ts';
import { gpu } from '../backend/webgpu/gpuTensor.ts';
import type { GpuOpsHost } from '../backend/backend.ts';
import { kernel } from '../gpu/pipelines.ts';
import { elementGrid } from '../gpu/runtime.ts';
import { uniformLayout } from '../gpu/uniforms.ts';
import { ropeBackwardRef, ropeRef } from '../reference/nn/rope.ts';
import { hfBenchInputs, HF_BENCH } from './hfBench.ts';
import { invFreqOfWords } from './ropeFrequencies.ts';
import { defineOp, type Op } from './op.ts';
import { lastDim } from './shapes.ts';

export interface RopeArgs {
  x: Tensor; // (R, H·Dh) f32 (leading dims are rows): q or k, one row per token
  positions: Tensor; // R i32 (any shape of R elements): each row's position id
  frequencies: Tensor; // (Dh/2, 2) i32, from ropeFrequencies
}

export interface RopeBackwardArgs {
  gradY: Tensor; // (R, H·Dh) f32: the gradient of rope's output
  positions: Tensor; // R i32, as in the forward
  frequencies: Tensor; // (Dh/2, 2) i32, as in the forward
}

const WG = 64;
const UNIFORM = uniformLayout('Params', { R: 'u32', H: 'u32', half: 'u32', sign: 'f32' });
const ROPE = kernel({ shader: 'rope', entry: 'rope', uniform: UNIFORM, storage: ['read', 'read', 'read', 'rw'], constants: { WG } });

/** R rows, H heads, half = Dh/2 of checked arguments. */
function dims(x: Tensor, frequencies: Tensor): { R: number; H: number; half: number } {
  const half = frequencies.shape[0];
  const width = x.shape[x.shape.length - 1];
  return { R: width === 0 ? 0 : x.size / width, H: width / (2 * half), half };
}

function check(op: string, x: Tensor, positions: Tensor, frequencies: Tensor): void {
  const name = op === 'rope' ? 'x' : 'gradY';
  expectDType(`${op} ${name}`, x, 'f32');
  expectDType(`${op} positions`, positions, 'i32');
  expectDType(`${op} frequencies`, frequencies, 'i32');
  if (frequencies.shape.length !== 2 || frequencies.shape[1] !== 2 || frequencies.shape[0] < 1) {
    throw new Error(`${op} frequencies: expected shape (Dh/2, 2) from ropeFrequencies, got [${frequencies.shape.join(', ')}]`);
  }
  const dh = 2 * frequencies.shape[0];
  const width = lastDim(`${op} ${name}`, x);
  if (width % dh !== 0) throw new Error(`${op} ${name}: its last dimension ${width} is not a multiple of the head width ${dh}`);
  const rows = width === 0 ? 0 : x.size / width;
  if (positions.size !== rows) throw new Error(`${op} positions: expected ${rows} elements (one per row of ${name}), got ${positions.size}`);
}

function cpuBody(x: Tensor, positions: Tensor, frequencies: Tensor, inverse: boolean): Tensor {
  const { H } = dims(x, frequencies);
  const inv = invFreqOfWords(cpu(frequencies).data);
  const rotate = inverse ? ropeBackwardRef : ropeRef;
  return new CpuTensor(rotate(cpu(x).data, cpu(positions).data, inv, H), [...x.shape], 'f32');
}

function webgpuBody(x: Tensor, positions: Tensor, frequencies: Tensor, be: GpuOpsHost, inverse: boolean): Tensor {
  const { R, H, half } = dims(x, frequencies);
  const y = be.empty(x.shape);
  if (R * H === 0) return y;
  be.rt.dispatch(ROPE, [gpu(x), gpu(positions), gpu(frequencies), gpu(y)], { R, H, half, sign: inverse ? -1 : 1 }, elementGrid(R * half, WG));
  return y;
}

/** x rotated by each row's position: rotate_half pairs (j, j + Dh/2) of every head. */
export const rope: Op<RopeArgs, Tensor> = defineOp({
  name: 'rope',
  kernels: [ROPE],
  check: ({ x, positions, frequencies }) => check('rope', x, positions, frequencies),
  cpu: ({ x, positions, frequencies }) => cpuBody(x, positions, frequencies, false),
  webgpu: ({ x, positions, frequencies }, be) => webgpuBody(x, positions, frequencies, be, false),
  bench: {
    label: `rope (${HF_BENCH.H} heads of ${HF_BENCH.Dh})`,
    run: (be, b) => {
      const h = hfBenchInputs(be, b);
      return rope(be, { x: h.q, positions: h.positions, frequencies: h.frequencies });
    },
  },
});

/** The gradient through rope: gradY rotated back by each row's position. */
export const ropeBackward: Op<RopeBackwardArgs, Tensor> = defineOp({
  name: 'ropeBackward',
  kernels: [ROPE],
  check: ({ gradY, positions, frequencies }) => check('ropeBackward', gradY, positions, frequencies),
  cpu: ({ gradY, positions, frequencies }) => cpuBody(gradY, positions, frequencies, true),
  webgpu: ({ gradY, positions, frequencies }, be) => webgpuBody(gradY, positions, frequencies, be, true),
});
