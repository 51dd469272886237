// Every Hugging Face model op once per kernel variant, with valid arguments, on a backend that
// records dispatches (tests/unit/wgsl_params.test.ts checks each against its shader's uniform
// struct and bindings). `cpuAdapter` flips the runtime's adapter kind to reach both variants.
import type { Backend } from '../../src/backend/backend.ts';
import type { DType, Tensor } from '../../src/backend/tensor.ts';
import type { WebGpuBackend } from '../../src/backend/webgpu/webgpuBackend.ts';
import { embeddingRows, embeddingRowsBackward } from '../../src/ops/embeddingRows.ts';
import { linear, linearBackward } from '../../src/ops/linear.ts';
import { rmsNorm, rmsNormBackward } from '../../src/ops/rmsNorm.ts';
import { rope, ropeBackward } from '../../src/ops/rope.ts';
import { swiglu, swigluBackward, swigluFused, swigluFusedBackward } from '../../src/ops/swiglu.ts';

export function runHfOps(host: WebGpuBackend): void {
  const t = (shape: number[], dtype: DType = 'f32'): Tensor => host.empty(shape, dtype);
  const rt = host.rt as unknown as { cpuAdapter: boolean };
  const saved = rt.cpuAdapter;
  for (const cpuAdapter of [false, true]) {
    rt.cpuAdapter = cpuAdapter;
    const be: Backend = host;
    const [M, D] = [6, 8];
    const { rstd } = rmsNorm(be, { x: t([M, D]), weight: t([D]), eps: 1e-6 });
    rmsNormBackward(be, { gradY: t([M, D]), x: t([M, D]), weight: t([D]), rstd, gradWeight: t([D]), into: t([M, D]) });
    const [H, Dh] = [2, 4];
    rope(be, { x: t([M, H * Dh]), positions: t([M], 'i32'), frequencies: t([Dh / 2, 2], 'i32') });
    ropeBackward(be, { gradY: t([M, H * Dh]), positions: t([M], 'i32'), frequencies: t([Dh / 2, 2], 'i32') });
    const F = 12;
    swiglu(be, { gate: t([M, F]), up: t([M, F]) });
    swigluBackward(be, { gradY: t([M, F]), gate: t([M, F]), up: t([M, F]) });
    swigluFused(be, { gateUp: t([M, 2 * F]) });
    swigluFusedBackward(be, { gradY: t([M, F]), gateUp: t([M, 2 * F]) });
    embeddingRows(be, { tokens: t([2, 3], 'i32'), table: [t([5, D]), t([4, D])] });
    embeddingRows(be, { tokens: t([2, 3], 'i32'), table: [t([5, D], 'f16')] });
    embeddingRowsBackward(be, { gradOut: t([2, 3, D]), tokens: t([2, 3], 'i32'), gradTable: [t([5, D]), t([4, D])] });
    for (const dtype of ['f16', 'f32'] as const) {
      linear(be, { x: t([M, D]), weight: t([F, D], dtype), bias: t([F]), residual: t([M, F]) });
      linearBackward(be, { gradY: t([M, F]), weight: t([F, D], dtype), into: t([M, D]) });
    }
  }
  rt.cpuAdapter = saved;
}
