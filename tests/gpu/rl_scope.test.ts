// The trainer's synchronous steps free their own intermediates through be.scope(): on WebGPU the
// pool buffers held by live tensors grow by exactly the tensors a step returns, come back to the
// start when the caller disposes those, and a step that throws holds nothing afterwards.
import { describe, expect, it } from 'vitest';
import type { Tensor } from '../../src/backend/tensor.ts';
import type { WebGpuBackend } from '../../src/backend/webgpu/webgpuBackend.ts';
import { modelFromCheckpoint } from '../../src/model/checkpoint.ts';
import { disposeExperience, makeExperience } from '../../src/rl/experience.ts';
import { PpoTrainer } from '../../src/rl/trainer.ts';
import { actorStep, criticStep, disposeMinibatch, gatherMinibatch } from '../../src/rl/update.ts';
import { webgpuBackend } from '../helpers/backends.ts';
import { tinyCheckpoint, tinyConfig } from '../helpers/rl.ts';

const held = (be: WebGpuBackend) => be.rt.memory().tensorBuffers;
const tensorsIn = (o: object) => Object.values(o).filter((v): v is Tensor => typeof v === 'object' && v !== null && 'shape' in v);
const opt = { lr: 1e-3, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0, maxGradNorm: 1 };

describe('be.scope() in src/rl (webgpu): a step holds exactly what it returns', () => {
  it.each([
    ['gae with a critic, KL loss, entropy', { useKlLoss: true, entropyCoef: 0.01 }],
    ['grpo (no critic), TIS', { advantageEstimator: 'group_norm', tisCap: 2 }],
    ['gae, sequence IS in the IcePop band, token_k2 rejection', { tisCap: 2, rolloutIs: 'sequence', icepopLower: 0.5, rolloutRs: 'token_k2', rolloutRsThreshold: 1e-3, topK: 3 }],
  ] as const)(
    '%s',
    async (_name, over) => {
      const be = (await webgpuBackend()) as WebGpuBackend;
      const cfg = tinyConfig({ seed: 5, ...over });
      const ck = await tinyCheckpoint('stop', 9);
      const trainer = await PpoTrainer.create({ be, config: cfg, actorCheckpoint: ck });
      await trainer.iteration(); // a real rollout to score
      const r = trainer.lastRollout!;
      const actor = modelFromCheckpoint(be, ck).model;
      const reference = modelFromCheckpoint(be, ck).model;
      const critic = cfg.advantageEstimator === 'gae' ? modelFromCheckpoint(be, ck, { head: 'value', seed: 1 }).model : null;
      const scores = Float64Array.from({ length: r.B }, (_, b) => b % 3);
      await be.readMany([]); // settle the uploads' staging
      const start = held(be);

      const exp = makeExperience(be, { actor, reference, critic }, r, scores, 0.05, cfg);
      expect(held(be) - start, 'experience').toBe(tensorsIn(exp).length);
      const afterExp = held(be);
      const mb = gatherMinibatch(
        be,
        exp,
        Int32Array.from({ length: r.B / 2 }, (_, i) => 2 * i),
      );
      expect(held(be) - afterExp, 'minibatch').toBe(tensorsIn(mb).length);
      const afterMb = held(be);
      const a = actorStep(actor, mb, r.P, r.A, cfg, opt, 0.1);
      expect(held(be) - afterMb, 'actor step').toBe(tensorsIn(a).length);
      expect(tensorsIn(a).length).toBe(cfg.useKlLoss ? 5 : 4);
      const afterActor = held(be);
      const c = critic ? criticStep(critic, mb, r.P, r.A, cfg, opt) : null;
      expect(held(be) - afterActor, 'critic step').toBe(c ? 2 : 0);
      // What the steps returned is real: finite statistics.
      const host = await be.readMany([a.policy, a.gradNorm, ...(c ? [c.value] : [])]);
      for (const h of host) expect(Array.from(h).every(Number.isFinite)).toBe(true);

      be.dispose(...tensorsIn(a), ...(c ? tensorsIn(c) : []));
      disposeMinibatch(be, mb);
      disposeExperience(be, exp);
      expect(held(be)).toBe(start);

      // tisCap without the sampler's log-probs throws inside makeExperience after its passes ran.
      const bad = { ...r, logprobs: undefined } as unknown as typeof r;
      expect(() => makeExperience(be, { actor, reference, critic }, bad, scores, 0.05, { ...cfg, tisCap: 2 })).toThrow(/tisCap/);
      expect(held(be), 'after a throw').toBe(start);

      for (const m of [actor, reference, critic]) m?.dispose();
      trainer.dispose();
    },
    120_000,
  );
});
