// NaN/Inf through the worker protocol with the real PpoTrainer on WebGPU (Dawn): an absurd actor
// learning rate (1e30, set past validateConfig — whose range stops at 1 — with the test hook)
// makes the next forward pass overflow. The host names the iteration and the stage the first
// non-finite value appeared in, pauses, restores the full state from before that iteration (all
// finite), posts nothing of the failed iteration, and suggests the actor learning rate.
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, type PpoConfig } from '../../src/rl/config.ts';
import { decodeSafetensors } from '../../src/model/safetensors.ts';
import { tinyCheckpoint } from '../helpers/rl.ts';
import { workerHarness } from '../helpers/workerHarness.ts';

const CFG: PpoConfig = { ...DEFAULT_CONFIG, task: 'stop', promptsPerBatch: 2, samplesPerPrompt: 2, maxResponseLength: 4, ppoEpochs: 1, miniBatches: 1, evalEvery: 0 };

describe('NaN/Inf guard (WebGPU on Dawn, real trainer)', () => {
  for (const [label, over, stage] of [
    // one minibatch: the update of iteration 1 succeeds, the rollout of iteration 2 overflows
    ['one minibatch', { miniBatches: 1 }, 'rollout'],
    // two minibatches: the second minibatch's forward pass after the first absurd step overflows
    ['two minibatches', { miniBatches: 2, ppoEpochs: 1 }, 'update'],
  ] as const) {
    it(`absurd learning rate (${label}): stage "${stage}" named, paused, last good state restored, learning rate suggested`, { timeout: 250_000 }, async () => {
      const ck = await tinyCheckpoint('stop');
      const g = workerHarness({ fetchCheckpoint: async () => ck, patience: 200_000, pollEvery: 10 });
      await g.send({ type: 'init', backend: 'webgpu', testHooks: true });
      await g.send({ type: 'setConfig', config: { ...CFG, ...over } });
      await g.send({ type: 'step' });
      await g.send({ type: 'debugSetActorLr', actorLr: 1e30 });
      await g.send({ type: 'start' });
      await g.until(() => g.of('paused').length > 0 || g.of('error').length > 0, 'the NaN pause');
      expect(g.of('error')).toEqual([]);
      expect(g.host.isRunning).toBe(false);
      const p = g.of('paused')[0];
      expect(p.nonFinite, p.reason).toBeDefined();
      const n = p.nonFinite!;
      expect(n.stage).toBe(stage);
      expect(Number.isFinite(n.value)).toBe(false);
      expect(n.advice.field).toBe('actorLr');
      expect(n.advice.kind).toBe('learning rate');
      expect(n.advice.value).toBe(1e30);
      expect(n.advice.suggested).toBe(DEFAULT_CONFIG.actorLr);
      expect(p.reason).toMatch(new RegExp(`non-finite ${n.quantity} = (NaN|-?Infinity) in iteration ${n.iter} \\(${stage} stage\\)`));
      // every metric posted is finite and none is from the failed iteration
      const iters = g.of('metrics').map((m) => m.iter);
      expect(iters).toEqual(Array.from({ length: n.iter }, (_, i) => i));
      for (const m of g.of('metrics')) for (const [k, v] of Object.entries(m.values)) expect(Number.isFinite(v), `${k} of iteration ${m.iter}`).toBe(true);
      // the restored state is the one from before the failed iteration, and all of it is finite
      await g.send({ type: 'saveState', requestId: 1 });
      // (decodeTrainerState would refuse it for its config: actorLr 1e30 is outside the valid range)
      const { tensors, metadata } = decodeSafetensors(new Uint8Array(g.of('state')[0].bytes));
      expect(Number(metadata.iteration)).toBe(n.iter);
      expect([...tensors.keys()].sort()).toEqual(['actor.adam_m', 'actor.adam_v', 'actor.params', 'critic.adam_m', 'critic.adam_v', 'critic.params', 'reference.params']);
      for (const [name, t] of tensors) expect(t.data.every(Number.isFinite), name).toBe(true);
    });
  }
});
