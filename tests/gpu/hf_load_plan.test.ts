// The memory plan HfModel.load makes before it uploads (loadPlan.ts): its weight bytes are the
// bytes the WebGPU pool hands out while loading (fresh synthetic folders of three families, f32
// and f16 weights, tables split by a small part size), a run that does not fit is refused before
// anything is allocated, its adapter bytes are what the trained roles and the NaN guard's copies
// take (three ranks), and the hf bench section runs end to end on a tiny shape (generation, and
// one PPO-LoRA and one GRPO-LoRA iteration with their stage times and bytes); over a whole PPO or
// GRPO iteration (four families, one to three minibatches) the pool holds at most what the plan
// says, and the plan says at most 5 % more.
import { describe, expect, it } from 'vitest';
import { benchHfShape, type HfBenchShape, shapeArch } from '../../src/bench/hf.ts';
import { benchHfRl, type HfRlRow, RL_STAGES } from '../../src/bench/hfRl.ts';
import { settle } from '../../src/bench/timing.ts';
import { maxBindingBytes, weightTensors } from '../../src/model/hf/deviceWeights.ts';
import { HfModel } from '../../src/model/hf/hfModel.ts';
import { backendOffer, MemoryRefusal, planLoad } from '../../src/model/hf/loadPlan.ts';
import { loraModulesOf, plannedLoraTargets } from '../../src/model/hf/loraModules.ts';
import { disposeLoraSnapshot, disposeLoraTrainable, newLoraTrainable, saveLora } from '../../src/model/hf/loraParams.ts';
import { formatBytes, loraFlatElements, planMemory, type RunShape } from '../../src/model/hf/memoryPlan.ts';
import { LORA_TARGETS } from '../../src/model/hf/lora.ts';
import { openHfFolder } from '../../src/model/hf/open.ts';
import { randomDeviceWeights } from '../../src/model/hf/randomWeights.ts';
import { hfPpoIteration } from '../../src/rl/hf/hfPpo.ts';
import { hfPpoConfig } from '../../src/rl/hf/hfPpoDefaults.ts';
import { type SyntheticSpec, synthesizeToMemory } from '../../src/model/hf/synthetic.ts';
import { layoutBuffers, uploadBytes, weightLayout } from '../../src/model/hf/weightLayout.ts';
import { webgpuBackend } from '../helpers/backends.ts';
import { rng } from '../helpers/random.ts';

const CASES: { name: string; spec: Omit<SyntheticSpec, 'seed'> }[] = [
  { name: 'llama F32, separate head', spec: { family: 'llama', dtype: 'F32', shards: 1 } },
  { name: 'qwen3 BF16 tied', spec: { family: 'qwen3', dtype: 'BF16', shards: 2 } },
  { name: 'gpt2 BF16', spec: { family: 'gpt2', dtype: 'BF16', shards: 1 } },
];

describe('HfModel.load: the memory plan', { timeout: 120_000 }, () => {
  it.each(CASES.map((c, i) => [c.name, c.spec, i] as const))('%s: the plan counts the bytes the load allocates (f32, f16)', async (_name, spec, i) => {
    const be = await webgpuBackend();
    const folder = await synthesizeToMemory({ ...spec, seed: rng(4100 + i).nextU32() });
    const info = await openHfFolder(folder);
    const a = info.arch;
    // a table part of at most 64 rows' f32 bytes: the 384-row embedding and head split in parts
    const maxTableBytes = 64 * a.dModel * 4;
    for (const dtype of ['f32', 'f16'] as const) {
      const plan = planLoad(be, a, dtype, undefined, { maxTableBytes })!;
      expect(plan.fits, plan.message).toBe(true);
      await settle(be);
      const before = be.rt.memory().tensorBytes;
      const model = await HfModel.load(be, folder, info, dtype, { maxTableBytes });
      await settle(be);
      expect(be.rt.memory().tensorBytes - before, dtype).toBe(plan.items[0].bytes);
      const layout = weightLayout(a, dtype, maxTableBytes);
      const weights = layoutBuffers({ weights: layout.weights, frequencies: null });
      expect(weightTensors(model.weights)).toHaveLength(weights.length);
      expect(model.weights.bytes).toBe(weights.reduce((s, b) => s + uploadBytes(b), 0));
      expect(model.weights.embed.map((t) => t.shape)).toEqual(layout.weights.embed.map((b) => b.shape));
      expect(model.weights.head.map((t) => [t.shape, t.dtype])).toEqual(layout.weights.head.map((b) => [b.shape, b.dtype]));
      expect(model.weights.head === model.weights.embed).toBe(a.tiedHead && dtype === 'f32');
      model.dispose();
      await settle(be);
      expect(be.rt.memory().tensorBytes).toBe(before);
    }
  });

  it.each(CASES.map((c, i) => [c.name, c.spec, i] as const))(
    '%s: the plan counts the bytes the actor, the critic with its value head and the NaN guard’s copies take',
    async (_name, spec, i) => {
      const be = await webgpuBackend();
      const folder = await synthesizeToMemory({ ...spec, seed: rng(4150 + i).nextU32() });
      const info = await openHfFolder(folder);
      const a = info.arch;
      const model = await HfModel.load(be, folder, info, 'f32');
      const modules = loraModulesOf(a.family);
      for (const rank of [1, 3, 8]) {
        const plan = planMemory(
          a,
          { batch: 1, promptTokens: 1, responseTokens: 0, trainBatch: 0, lora: { rank, targets: plannedLoraTargets(a, modules), roles: 2 }, valueHead: true, weightDtype: 'f32' },
          backendOffer(be)!,
        );
        await settle(be);
        const before = be.rt.memory().tensorBytes;
        const settings = { r: rank, alpha: 2 * rank, rslora: false, targets: [...modules] };
        const actor = newLoraTrainable(model, settings, 1);
        const critic = newLoraTrainable(model, settings, 2, true);
        const copies = [saveLora(be, actor, null), saveLora(be, critic, null)];
        await settle(be);
        expect(be.rt.memory().tensorBytes - before, `rank ${rank}`).toBe(plan.items.find((x) => x.what === 'adapters')!.bytes);
        expect([actor.size, critic.size]).toEqual([
          loraFlatElements(a, rank, plannedLoraTargets(a, modules), false),
          loraFlatElements(a, rank, plannedLoraTargets(a, modules), true),
        ]);
        for (const c of copies) disposeLoraSnapshot(be, c);
        disposeLoraTrainable(be, actor);
        disposeLoraTrainable(be, critic);
      }
      model.dispose();
    },
  );

  it('a run the GPU memory cannot hold is refused before anything is allocated, naming needs, offer and what to lower', async () => {
    const be = await webgpuBackend();
    const folder = await synthesizeToMemory({ family: 'qwen3', dtype: 'F32', shards: 1, seed: rng(4200).nextU32() });
    const info = await openHfFolder(folder);
    const run = { batch: 4, promptTokens: 16, responseTokens: 48 };
    const f32 = planLoad(be, info.arch, 'f32', run)!;
    const f16 = planLoad(be, info.arch, 'f16', run)!;
    expect(f16.totalBytes).toBeLessThan(f32.totalBytes);
    const memoryBytes = Math.floor((f16.totalBytes + f32.totalBytes) / 2);
    await settle(be);
    const before = be.rt.memory().tensorBytes;
    const err = await HfModel.load(be, folder, info, 'f32', { run, memoryBytes }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(MemoryRefusal);
    const message = (err as MemoryRefusal).message;
    expect(message).toContain(`this run needs ${formatBytes(f32.totalBytes)} on the GPU (weights ${formatBytes(f32.items[0].bytes)} in f32`);
    expect(message).toContain(`the GPU offers ${formatBytes(memoryBytes)}`);
    expect(message).toContain(`Store the weights in f16 (${formatBytes(f16.items[0].bytes)} instead of ${formatBytes(f32.items[0].bytes)})`);
    expect(message).toMatch(/Lower the batch to \d \(now 4\), or the response length \(now 48\)\.$/);
    expect(be.rt.memory().tensorBytes).toBe(before);
    // the f16 weights fit the same memory
    const model = await HfModel.load(be, folder, info, 'f16', { run, memoryBytes });
    model.dispose();
  });

  // The plan against the pool, over a whole PPO / GRPO iteration on random weights: what a pool
  // empty before the model would hold after it (each size class as often as it was in use at once)
  // is at most the plan's total, and the plan at most 5 % above it.
  const ITERATION_CASES = [
    { family: 'qwen3', dims: [2, 64, 4, 2, 16, 128, 384], run: [2, 4, 16, 8, 1], estimator: 'gae' },
    { family: 'llama', dims: [2, 64, 4, 2, 16, 160, 384], run: [2, 4, 12, 8, 2], estimator: 'gae', inspectEpochs: 2 },
    { family: 'gpt2', dims: [2, 64, 4, 4, 16, 256, 384], run: [2, 4, 12, 8, 1], estimator: 'group_norm' },
    { family: 'qwen2', dims: [2, 80, 5, 1, 16, 200, 700], run: [3, 3, 10, 5, 3], estimator: 'gae' },
  ] as const;
  it.each(ITERATION_CASES.map((c) => [`${c.family} ${c.estimator}, ${c.run[4]} minibatch(es)${'inspectEpochs' in c ? `, ${c.inspectEpochs} epochs inspected` : ''}`, c] as const))(
    '%s: the plan bounds what the pool holds after an iteration, and by at most 5 per cent',
    async (_name, c) => {
      const be = await webgpuBackend();
      const [nLayer, dModel, nHead, nKvHead, headDim, dFf, vocab] = c.dims;
      const a = shapeArch({ family: c.family, tied: true, dims: { nLayer, dModel, nHead, nKvHead, headDim, dFf, vocab, maxPositions: 64 } });
      const [prompts, samples, promptTokens, newTokens, miniBatches] = c.run;
      const batch = prompts * samples;
      const gpt2 = c.family === 'gpt2';
      // an inspected iteration keeps each step's new log-probs and values until its end
      const inspect = 'inspectEpochs' in c;
      const epochs = 'inspectEpochs' in c ? c.inspectEpochs : 1;
      const plan = planMemory(
        a,
        {
          batch,
          promptTokens,
          responseTokens: newTokens,
          trainBatch: batch / miniBatches,
          updateSteps: epochs * miniBatches,
          inspect,
          lora: { rank: 8, targets: gpt2 ? ['qkv', 'o', 'up', 'down'] : ['q', 'k', 'v', 'o', 'gate', 'up', 'down'], roles: c.estimator === 'gae' ? 2 : 1 },
          valueHead: c.estimator === 'gae',
          weightDtype: 'f32',
          nanGuard: false,
        },
        backendOffer(be)!,
      );
      await settle(be);
      be.rt.pool.resetPeak();
      const inUse = be.rt.pool.stats().inUseBytes;
      const model = HfModel.fromWeights(be, a, randomDeviceWeights(be, a, 'f32', 3, maxBindingBytes(be)));
      const settings = { r: 8, alpha: 16, rslora: false, targets: gpt2 ? (['c_attn', 'c_proj', 'c_fc'] as const) : LORA_TARGETS };
      const actor = newLoraTrainable(model, settings, 1);
      const critic = c.estimator === 'gae' ? newLoraTrainable(model, settings, 2, true) : null;
      const r = rng(4300 + c.family.length);
      const ids = Array.from({ length: prompts }, () => Array.from({ length: promptTokens }, () => r.int(0, vocab)));
      try {
        await hfPpoIteration(
          { model, actor, critic, eosIds: [], padId: 0 },
          ids,
          (_p, responses) => responses.map((x) => x.length % 2),
          {
            ...hfPpoConfig({ estimator: c.estimator, samplesPerPrompt: samples, maxNewTokens: newTokens, miniBatches, ppoEpochs: epochs, seed: 1, klCoef: 0.05, lr: 1e-4 }),
            inspect,
          },
          0,
        );
        await settle(be);
        const held = be.rt.pool.heldSincePeakReset() - inUse;
        expect(held, `held ${formatBytes(held)}, plan ${formatBytes(plan.totalBytes)}`).toBeLessThanOrEqual(plan.totalBytes);
        expect(plan.totalBytes).toBeLessThanOrEqual(1.05 * held);
      } finally {
        disposeLoraTrainable(be, actor);
        if (critic) disposeLoraTrainable(be, critic);
        model.dispose();
      }
    },
  );

  // A later iteration whose prompts and responses are shorter asks for smaller sizes: a pool that
  // kept every size would hold more than the plan (the bookkeeping's count of it says so); with
  // the plan as the pool's bound (what a training session sets), it holds at most the plan.
  it('the plan as the pool’s bound: a long iteration, then a shorter one, held within the plan', async () => {
    const be = await webgpuBackend();
    const a = shapeArch({ family: 'qwen3', tied: true, dims: { nLayer: 2, dModel: 64, nHead: 4, nKvHead: 2, headDim: 16, dFf: 128, vocab: 384, maxPositions: 64 } });
    const [prompts, samples, promptTokens, newTokens] = [2, 4, 16, 8];
    const batch = prompts * samples;
    const lora = { rank: 8, targets: ['q', 'k', 'v', 'o', 'gate', 'up', 'down'], roles: 2 } satisfies RunShape['lora'];
    const run: RunShape = { batch, promptTokens, responseTokens: newTokens, trainBatch: batch, lora, valueHead: true, weightDtype: 'f32', nanGuard: false };
    const plan = planMemory(a, run, backendOffer(be)!);
    await settle(be);
    be.rt.pool.destroyAll(); // what earlier tests left free is not this run's
    be.rt.pool.resetPeak();
    const inUse = be.rt.pool.stats().inUseBytes;
    be.rt.pool.holdLimit = inUse + plan.totalBytes;
    const model = HfModel.fromWeights(be, a, randomDeviceWeights(be, a, 'f32', 3, maxBindingBytes(be)));
    const settings = { r: 8, alpha: 16, rslora: false, targets: LORA_TARGETS };
    const actor = newLoraTrainable(model, settings, 1);
    const critic = newLoraTrainable(model, settings, 2, true);
    const r = rng(4400);
    try {
      for (const [it, [P, N]] of [
        [promptTokens, newTokens],
        [promptTokens / 4, newTokens / 4],
      ].entries()) {
        const ids = Array.from({ length: prompts }, () => Array.from({ length: P }, () => r.int(0, a.vocab)));
        await hfPpoIteration(
          { model, actor, critic, eosIds: [], padId: 0 },
          ids,
          (_p, responses) => responses.map((x) => x.length % 2),
          hfPpoConfig({ estimator: 'gae', samplesPerPrompt: samples, maxNewTokens: N, miniBatches: 1, seed: 1, klCoef: 0.05, lr: 1e-4 }),
          it,
        );
        await settle(be);
      }
      const unbounded = be.rt.pool.heldSincePeakReset() - inUse;
      const held = be.rt.pool.stats().bytes - inUse;
      expect(unbounded, `a pool keeping every size: ${formatBytes(unbounded)}, plan ${formatBytes(plan.totalBytes)}`).toBeGreaterThan(plan.totalBytes);
      expect(held, `held ${formatBytes(held)}, plan ${formatBytes(plan.totalBytes)}`).toBeLessThanOrEqual(plan.totalBytes);
    } finally {
      be.rt.pool.holdLimit = null;
      disposeLoraTrainable(be, actor);
      disposeLoraTrainable(be, critic);
      model.dispose();
    }
  });

  it('the hf bench section builds a tiny shape, times prefill and decode, and a PPO-LoRA and a GRPO-LoRA iteration', async () => {
    const be = await webgpuBackend();
    const shape: HfBenchShape = {
      name: 'tiny',
      family: 'qwen3',
      tied: true,
      dims: { nLayer: 1, dModel: 64, nHead: 4, nKvHead: 2, headDim: 16, dFf: 128, vocab: 384, maxPositions: 64 },
      batch: 2,
      prompt: 4,
      decode: 3,
      real: false,
    };
    const row = await benchHfShape(be, shape, { repeats: 1 });
    if ('skipped' in row) throw new Error(row.skipped);
    expect(row.deviceBytes).toBe(row.planBytes);
    for (const k of ['prefillTokensPerS', 'prefillGflops', 'decodeTokensPerS', 'decodeGflops', 'decodeMsPerStep'] as const) {
      expect(Number.isFinite(row[k]) && row[k] > 0, k).toBe(true);
    }
    expect(row.prefillFlopsPerToken).toBeGreaterThan(0);

    const before = be.rt.memory().tensorBytes;
    const rl = await benchHfRl(be, { ...shape, rl: { prompts: 2, samples: 2, prompt: 3, newTokens: 2 } });
    expect(rl.map((r) => r.run)).toEqual(['PPO-LoRA', 'GRPO-LoRA']);
    for (const r of rl) {
      if ('skipped' in r) throw new Error(r.skipped);
      const critic = r.run === 'PPO-LoRA';
      const ms = RL_STAGES.map((x) => r.stageMs[x]);
      expect(ms.every((x) => x >= 0)).toBe(true);
      // the stage clock starts inside the iteration: its stages add up to at most its time
      expect(ms.reduce((s, x) => s + x, 0)).toBeLessThanOrEqual(r.iterationS * 1000 + 1);
      for (const x of ['rollout', 'logprobs', 'actor update'] as const) expect(r.stageMs[x], x).toBeGreaterThan(0);
      expect(r.stageMs.values > 0 && r.stageMs['critic update'] > 0).toBe(critic);
      for (const k of ['rolloutTokensPerS', 'updateTokensPerS', 'rolloutGflops', 'updateGflops'] as const) expect(Number.isFinite(r[k]) && r[k] > 0, k).toBe(true);
      expect(r.baseBytes).toBe(row.deviceBytes);
      expect(r.actorBytes).toBeGreaterThan(0);
      expect(r.criticBytes > 0).toBe(critic);
      expect(r.peakBytes).toBeGreaterThan(r.baseBytes + r.actorBytes + r.criticBytes);
      expect(r.heldBytes).toBeGreaterThanOrEqual(r.peakBytes); // the pool keeps what each stage freed
      expect(r.heldBytes).toBeLessThanOrEqual(r.planBytes);
      expect(r.checkpointS).toBeGreaterThan(0);
    }
    const [ppo, grpo] = rl as HfRlRow[];
    expect(ppo.criticBytes).toBeGreaterThan(ppo.actorBytes); // the same adapters and a value head
    expect(grpo.actorBytes).toBe(ppo.actorBytes);
    // the worker's checkpoint: the actor's PEFT files and training state, and with a critic its state too
    expect(grpo.checkpointBytes).toBeGreaterThan(0);
    expect(ppo.checkpointBytes).toBeGreaterThan(grpo.checkpointBytes);
    expect(be.rt.memory().tensorBytes).toBe(before); // the model and the roles are freed
  });
});
