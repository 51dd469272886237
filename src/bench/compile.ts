// `npm run bench -- --only compile`: what building the page's pipelines costs before the first
// iteration (on SwiftShader this, not the math, dominates "open the page → first chart"). Each
// mode runs on a fresh device, so no pipeline or shader cache carries over: one after the other
// with createComputePipeline (what the first iteration does when nothing is precompiled), and all
// at once with createComputePipelineAsync (Backend.precompile). Then the slowest kernels.
// The set is the character model's kernels this adapter dispatches (as the page builds them) plus
// the fused decode step at config S's shape (the one kernel built per model shape).
import { WebGpuBackend } from '../backend/webgpu/webgpuBackend.ts';
import { decodeStepKernel, decodeStepKernels } from '../ops/decodeStep.ts';
import { modelKernels } from '../ops/registry.ts';
import { specKey } from '../gpu/pipelines.ts';
import { GpuRuntime } from '../gpu/runtime.ts';
import { nodeDevice } from '../node/webgpu.ts';
import { BENCH_CONFIGS } from './model.ts';
import { table } from './timing.ts';

async function freshBackend(): Promise<WebGpuBackend> {
  const { device, adapterName } = await nodeDevice();
  return new WebGpuBackend(new GpuRuntime(device, adapterName));
}

export async function printCompileBench(): Promise<unknown> {
  const S = BENCH_CONFIGS[0];
  const shapeS = { dModel: S.dModel, nHead: S.nHead, seqLen: S.prompt + S.response };
  let be = await freshBackend();
  const kernels = [...modelKernels('char', be.rt.cpuAdapter), decodeStepKernel(shapeS, be.rt.cpuAdapter)];
  const perKernel: [string, number][] = [];
  let t0 = performance.now();
  for (const k of kernels) {
    const t = performance.now();
    be.rt.pipelines.get(k);
    perKernel.push([specKey(k).split('|')[0], performance.now() - t]);
  }
  await be.rt.device.queue.onSubmittedWorkDone();
  const syncMs = performance.now() - t0;
  be.rt.device.destroy();
  be = await freshBackend();
  t0 = performance.now();
  await be.precompile([...modelKernels('char'), ...decodeStepKernels(shapeS)]);
  const asyncMs = performance.now() - t0;
  be.rt.device.destroy();
  perKernel.sort((a, b) => b[1] - a[1]);
  console.log(`## Pipeline compilation (${kernels.length} kernels, fresh device each)\n`);
  console.log(
    table(
      ['mode', 'ms'],
      [
        ['one by one (createComputePipeline)', syncMs],
        ['all at once (createComputePipelineAsync, precompile)', asyncMs],
      ],
    ),
  );
  console.log('\nSlowest kernels to build (one by one):\n');
  console.log(
    table(
      ['kernel', 'ms'],
      perKernel.slice(0, 10).map(([k, t]) => [k, t]),
    ),
  );
  console.log('');
  return { kernels: kernels.length, syncMs, asyncMs, slowest: perKernel.slice(0, 10) };
}
