// Every kernel the ops declare — both variants where an op picks one by adapter — plus the
// fused decode step at each benchmark shape compiles and builds a compute pipeline with no error
// from the shader compiler or the validation layer, on wgpu (Naga) under Deno (tests/wgpu/run.ts):
// a WGSL construct Naga refuses fails here by name, not as a wrong number downstream. (On Dawn the
// gpu project builds every kernel the adapter dispatches in trainer_dispatch.test.ts's precompile
// test; building all of them one by one there takes SwiftShader over a minute.)
import { describe, expect, it } from 'vitest';
import { BENCH_CONFIGS } from '../../src/bench/model.ts';
import { decodeStepKernels } from '../../src/ops/decodeStep.ts';
import { type KernelSpec, PipelineCache, specKey } from '../../src/gpu/pipelines.ts';
import { declaredKernels } from '../../src/ops/registry.ts';
import { shaderSource } from '../../src/gpu/shaders.ts';
import { webgpuBackend } from '../helpers/backends.ts';

const KERNELS: KernelSpec[] = [...declaredKernels(), ...BENCH_CONFIGS.flatMap((c) => decodeStepKernels({ dModel: c.dModel, nHead: c.nHead, seqLen: c.prompt + c.response }))];

describe('every declared kernel compiles and builds a pipeline on webgpu', () => {
  it('declares the kernels the backend dispatches', () => {
    expect(KERNELS.length).toBeGreaterThan(40);
    expect(new Set(KERNELS.map(specKey)).size).toBe(KERNELS.length);
  });

  it.each(KERNELS.map((k) => [specKey(k), k] as const))('%s', async (_key, spec) => {
    const { device } = (await webgpuBackend()).rt;
    device.pushErrorScope('validation');
    device.pushErrorScope('internal');
    const module = device.createShaderModule({ label: spec.shader, code: shaderSource(spec.shader, spec.constants) });
    const info = typeof module.getCompilationInfo === 'function' ? await module.getCompilationInfo() : { messages: [] };
    const errors = info.messages.filter((m) => m.type === 'error').map((m) => `${m.lineNum}:${m.linePos} ${m.message}`);
    // A fresh cache: the pipeline is built now, with the same layout and descriptor the backend uses.
    let buildError = '';
    await new PipelineCache(device).precompile([spec]).catch((e: unknown) => {
      buildError = String(e);
    });
    const internal = await device.popErrorScope();
    const validation = await device.popErrorScope();
    expect(errors, 'shader compilation errors').toEqual([]);
    expect(buildError, 'createComputePipelineAsync').toBe('');
    expect(internal?.message ?? null, 'internal error').toBeNull();
    expect(validation?.message ?? null, 'validation error').toBeNull();
  });
});
