// The character model as a member of the Hugging Face family (src/model/hf/charFamily.ts): every
// stage the trainer runs — sampling, the experience (old and reference log-probs, critic values,
// shaped rewards, advantages), the actor and critic steps, SFT, device snapshots, its state in the
// character model's layout — computed through HfModel's GPT-2 path equals the one computed through
// the character model's own Gpt, on real rollouts (left-padded prompts, responses cut at EOS).
// Bounds: the CPU backend's float64 gives the same bits through both where the same op bodies sum in
// the same order (sampling, the experience), 1e-12 after AdamW; on WebGPU the f32 kernels differ:
// 2e-5 (measured ≤ 1.9e-6 for the experience, ≤ 4.4e-6 after AdamW, on SwiftShader and lavapipe).
import { describe, expect, it } from 'vitest';
import type { Backend } from '../../src/backend/backend.ts';
import { Gpt } from '../../src/model/gpt.ts';
import { CharFamilyTrainable, charFamilyModel } from '../../src/model/hf/charFamily.ts';
import { disposeRollout, generate } from '../../src/model/generate.ts';
import { paramLayout } from '../../src/model/params.ts';
import { leftPadBatch } from '../../src/model/tokenizer.ts';
import { DEFAULT_SFT, trainSft } from '../../src/model/sft.ts';
import type { GptConfig } from '../../src/model/config.ts';
import type { SequenceModel, TrainableSequenceModel } from '../../src/model/sequenceModel.ts';
import { disposeExperience, type Experience, makeExperience } from '../../src/rl/experience.ts';
import type { PpoConfig } from '../../src/rl/config.ts';
import type { RolloutBatch } from '../../src/rl/rollout.ts';
import { PpoTrainer } from '../../src/rl/trainer.ts';
import { type ActorStepStats, actorStep, type CriticStepStats, criticStep, disposeMinibatch, gatherMinibatch } from '../../src/rl/update.ts';
import type { Tensor } from '../../src/backend/tensor.ts';
import { getTask, taskTokenizer } from '../../src/tasks/index.ts';
import { Rng } from '../../src/util/rng.ts';
import { BACKENDS } from '../helpers/backends.ts';
import { expectClose } from '../helpers/random.ts';
import { tinyCheckpoint, tinyConfig } from '../helpers/rl.ts';

/** Parameters far from GPT-2's small init, so log-probs spread over several nats: weights N(0, 0.3²), norms' γ N(1, 0.2²). */
function spreadParams(cfg: GptConfig, seed: number): Float64Array {
  const r = new Rng(seed);
  const layout = paramLayout(cfg);
  const out = new Float64Array(layout.total);
  for (const e of layout.entries) {
    const isGamma = /ln_\w+\.weight$/.test(e.name);
    for (let i = 0; i < e.size; i++) out[e.offset + i] = Math.fround(isGamma ? 1 + 0.2 * r.normal() : 0.3 * r.normal());
  }
  return out;
}

/** A real rollout of the stop task from a tiny checkpoint: left-padded prompts, responses cut at EOS. */
async function realRollout(be: Backend, cfg: PpoConfig): Promise<RolloutBatch> {
  const trainer = await PpoTrainer.create({ be, config: cfg, actorCheckpoint: await tinyCheckpoint('stop', 9) });
  try {
    await trainer.iteration();
    return trainer.lastRollout!;
  } finally {
    trainer.dispose();
  }
}

/** A 2-layer character model of the stop task's alphabet. */
function stopModel(over: Partial<GptConfig> = {}): GptConfig {
  return { vocabSize: taskTokenizer(getTask('stop')).vocabSize, nLayer: 2, nHead: 2, dModel: 32, maxSeq: 16, head: 'lm', ...over };
}

const FIELDS = ['oldLogprobs', 'refLogprobs', 'values', 'kl', 'rewards', 'advantages', 'returns'] as const;

async function readExperience(be: Backend, e: Experience): Promise<Record<(typeof FIELDS)[number], Float64Array>> {
  const host = await be.readMany(FIELDS.map((f) => e[f]));
  return Object.fromEntries(FIELDS.map((f, i) => [f, host[i]])) as Record<(typeof FIELDS)[number], Float64Array>;
}

describe.each(BACKENDS)('the character model in the Hugging Face family, on %s', (name, make) => {
  const atol = name === 'cpu' ? 0 : 2e-5;

  it.each([['gae'], ['group_norm']] as const)(
    'the experience of a real rollout is the same through either family (%s)',
    async (estimator) => {
      const be = await make();
      const cfg = tinyConfig({ seed: 7, advantageEstimator: estimator, klCoef: 0.1 });
      const r = await realRollout(be, cfg);
      const lm = stopModel();
      const actor = new Gpt(be, lm, spreadParams(lm, 1));
      const reference = new Gpt(be, lm, spreadParams(lm, 2));
      const critic = estimator === 'gae' ? new Gpt(be, { ...lm, head: 'value' }, spreadParams({ ...lm, head: 'value' }, 3)) : null;
      const hf = { actor: await charFamilyModel(actor), reference: await charFamilyModel(reference), critic: critic ? await charFamilyModel(critic) : null };
      const scores = Float64Array.from({ length: r.B }, (_, b) => (b % 3) - 1);
      const own = makeExperience(be, { actor, reference, critic }, r, scores, 0.1, cfg);
      const fam = makeExperience(be, { actor: hf.actor.sequence, reference: hf.reference.sequence, critic: hf.critic?.sequence ?? null }, r, scores, 0.1, cfg);
      try {
        const [a, b] = [await readExperience(be, own), await readExperience(be, fam)];
        const mask = await be.read(own.actionMask);
        // A real comparison: masked log-probs spread over nats, the actor and reference differ, values are not all 0.
        const masked = (x: Float64Array) => Array.from(x).filter((_, i) => mask[i] > 0);
        expect(Math.min(...masked(a.oldLogprobs))).toBeLessThan(-1);
        expect(Math.max(...masked(a.kl).map(Math.abs))).toBeGreaterThan(0.05);
        if (critic) expect(Math.max(...masked(a.values).map(Math.abs))).toBeGreaterThan(0.1);
        for (const f of FIELDS) expectClose(b[f], a[f], 0, atol, `${f}: HfModel's GPT-2 against the character model`);
      } finally {
        disposeExperience(be, own);
        disposeExperience(be, fam);
        for (const m of [hf.actor, hf.reference, hf.critic]) m?.dispose();
        for (const m of [actor, reference, critic]) m?.dispose();
      }
    },
    120_000,
  );

  it('two update steps train it as they train the character model: the same losses, gradient norms and parameters after', async () => {
    const be = await make();
    // The update's bounds: float64 sums the gradient norm over another flat order (measured ≤ 2e-13);
    // f32 within 2e-5 of 1 + |x| (measured ≤ 4.4e-6 on SwiftShader and on lavapipe, logits up to 7).
    const tol = name === 'cpu' ? { rtol: 1e-12, atol: 1e-12 } : { rtol: 2e-5, atol: 2e-5 };
    const cfg = tinyConfig({ seed: 11, useKlLoss: true, entropyCoef: 0.01, klCoef: 0.1 });
    const r = await realRollout(be, cfg);
    const lm = stopModel();
    const vc: GptConfig = { ...lm, head: 'value' };
    const own = { actor: new Gpt(be, lm, spreadParams(lm, 1)), reference: new Gpt(be, lm, spreadParams(lm, 2)), critic: new Gpt(be, vc, spreadParams(vc, 3)) };
    const fam = { actor: await CharFamilyTrainable.create(own.actor), critic: await CharFamilyTrainable.create(own.critic) };
    const scores = Float64Array.from({ length: r.B }, (_, b) => (b % 3) - 1);
    const exp = makeExperience(be, own, r, scores, 0.1, cfg);
    // Weight decay on, clipping reached (the spread parameters' gradients are large). AdamW's ε is
    // 1e-4, not 1e-8: a gradient that is 0 in exact arithmetic (GPT-2's key bias) is f32 rounding
    // noise, which ε = 1e-8 would turn into a step of ±lr whose sign each engine's rounding picks.
    const opt = { lr: 3e-3, beta1: 0.9, beta2: 0.99, eps: 1e-4, weightDecay: 0.1, maxGradNorm: 1 };
    try {
      for (const [step, rows] of [
        [0, [0, 2, 4, 6]],
        [1, [1, 3, 5, 7]],
      ] as const) {
        const mb = gatherMinibatch(be, exp, Int32Array.from(rows));
        const a = [actorStep(own.actor, mb, r.P, r.A, cfg, opt, 0.2), actorStep(fam.actor, mb, r.P, r.A, cfg, opt, 0.2)];
        const c = [criticStep(own.critic, mb, r.P, r.A, cfg, opt, true), criticStep(fam.critic, mb, r.P, r.A, cfg, opt, true)];
        const read = async (x: ActorStepStats | CriticStepStats) => be.readMany(Object.values(x).filter((t): t is Tensor => !!t));
        const [ao, af, co, cf] = [await read(a[0]), await read(a[1]), await read(c[0]), await read(c[1])];
        expect(ao[3][0], 'the actor clips: its gradient norm is past maxGradNorm').toBeGreaterThan(1);
        for (const [i, x] of ao.entries()) expectClose(af[i], x, tol.rtol, tol.atol, `step ${step}: actor statistic ${i} of ${Object.keys(a[0]).join(', ')}`);
        for (const [i, x] of co.entries()) expectClose(cf[i], x, tol.rtol, tol.atol, `step ${step}: critic statistic ${i} of ${Object.keys(c[0]).join(', ')}`);
        // the parameters after the step: every position's output on the minibatch
        for (const role of ['actor', 'critic'] as const) {
          const outs = [own[role].infer(mb.sequences, mb.attnMask, mb.positions), fam[role].infer(mb.sequences, mb.attnMask, mb.positions)];
          const [x, y] = await be.readMany(outs);
          be.dispose(...outs);
          expectClose(y, x, tol.rtol, tol.atol, `step ${step}: the ${role}'s outputs after its AdamW step`);
        }
        for (const s of [...a, ...c]) be.dispose(...Object.values(s));
        disposeMinibatch(be, mb);
      }
    } finally {
      disposeExperience(be, exp);
      fam.actor.dispose();
      fam.critic.dispose();
      for (const m of Object.values(own)) m.dispose();
    }
  }, 120_000);

  it('SFT trains it as it trains the character model: the same loss and gradient norm at every step', async () => {
    const be = await make();
    const task = getTask('stop');
    const tok = taskTokenizer(task);
    const lm = stopModel({ maxSeq: 32 });
    const own = new Gpt(be, lm, spreadParams(lm, 4));
    const fam = await CharFamilyTrainable.create(own);
    const run = async <Cache>(model: TrainableSequenceModel<Cache>) => {
      const logs: number[][] = [];
      // ε 1e-4 as in the update test: f32 noise of a zero gradient is not turned into ±lr steps
      const optimizer = { ...DEFAULT_SFT.optimizer, eps: 1e-4 };
      await trainSft(model, task, tok, { ...DEFAULT_SFT, optimizer, batchSize: 8, steps: 4, seed: 5, logEvery: 1, onLog: (l) => logs.push([l.loss, l.gradNorm]) });
      return logs.flat();
    };
    // the same bounds as the update's: AdamW over three steps before the last loss
    const tol = name === 'cpu' ? { rtol: 1e-12, atol: 1e-12 } : { rtol: 2e-5, atol: 2e-5 };
    try {
      const [a, b] = [await run(own), await run(fam)];
      expect(a[6], 'the loss fell over the steps').toBeLessThan(a[0]);
      expectClose(b, a, tol.rtol, tol.atol, 'SFT (loss, gradient norm) per step, HfModel against the character model');
    } finally {
      fam.dispose();
      own.dispose();
    }
  });

  it.each([
    ['width 32, the fused decode step', 32],
    ['width 34, the per-op chain', 34],
  ] as const)('sampling draws the same responses through either family (%s)', async (_label, dModel) => {
    const be = await make();
    const tok = taskTokenizer(getTask('stop'));
    const lm = stopModel({ dModel, maxSeq: 24 });
    const own = new Gpt(be, lm, spreadParams(lm, 6));
    const fam = await CharFamilyTrainable.create(own);
    const prompts = ['n=3:', 'a', '12=ab:9b', '0:'].map((p) => tok.encodePrompt(p));
    const P = Math.max(...prompts.map((p) => p.length));
    const pb = { ...leftPadBatch(prompts, P), B: prompts.length, P };
    const params = { temperature: 1, topK: 0, topP: 1, seed: 9, eosId: tok.eosId, padId: tok.padId };
    const rollouts = [generate(own, pb, 24 - P, params), generate(fam, pb, 24 - P, params)];
    try {
      const [a, b] = await Promise.all(rollouts.map((r) => be.readMany([r.sequences, r.actionMask, r.finished, r.logprobs])));
      expect(Array.from(b[0]), 'the sampled sequences').toEqual(Array.from(a[0]));
      expect(Array.from(b[1]), 'the action mask').toEqual(Array.from(a[1]));
      expect(Array.from(b[2]), 'which rows drew EOS').toEqual(Array.from(a[2]));
      expect(new Set(a[0]).size, 'a real draw: many tokens').toBeGreaterThan(8);
      expectClose(b[3], a[3], 0, name === 'cpu' ? 1e-12 : 2e-5, "the sampler's log-probs");
    } finally {
      for (const r of rollouts) disposeRollout(own, r);
      fam.dispose();
      own.dispose();
    }
  });

  it('a snapshot puts the weights and the AdamW state back: the steps after it repeat exactly', async () => {
    const be = await make();
    const cfg = tinyConfig({ seed: 12 });
    const r = await realRollout(be, cfg);
    const lm = stopModel();
    const own = { actor: new Gpt(be, lm, spreadParams(lm, 1)), reference: new Gpt(be, lm, spreadParams(lm, 2)) };
    const fam = await CharFamilyTrainable.create(own.actor);
    const exp = makeExperience(
      be,
      { ...own, critic: null },
      r,
      Float64Array.from({ length: r.B }, (_, b) => b % 2),
      0.1,
      cfg,
    );
    const mb = gatherMinibatch(
      be,
      exp,
      Int32Array.from({ length: r.B }, (_, i) => i),
    );
    const opt = { lr: 3e-3, beta1: 0.9, beta2: 0.99, eps: 1e-8, weightDecay: 0.1, maxGradNorm: 1 };
    /** Two actor steps; the log-probs each step's forward saw. */
    const twoSteps = async () => {
      const out: number[] = [];
      for (let i = 0; i < 2; i++) {
        const s = actorStep(fam, mb, r.P, r.A, cfg, opt, 0);
        out.push(...(await be.read(s.logprobs)));
        be.dispose(...Object.values(s));
      }
      return out;
    };
    try {
      await twoSteps(); // moments that are not zero
      const snap = fam.snapshotInto(null);
      const first = await twoSteps();
      expect(fam.steps).toBe(snap.steps + 2);
      fam.restoreSnapshot(snap);
      expect(fam.steps).toBe(snap.steps);
      const again = await twoSteps();
      expect(again).toEqual(first);
      be.dispose(snap.params, snap.m, snap.v);
    } finally {
      disposeMinibatch(be, mb);
      disposeExperience(be, exp);
      fam.dispose();
      for (const m of Object.values(own)) m.dispose();
    }
  });

  it("its state reads and sets in the character model's own layout: a Gpt made from it computes what it computes", async () => {
    const be = await make();
    const cfg = tinyConfig({ seed: 13 });
    const r = await realRollout(be, cfg);
    const vc = stopModel({ head: 'value' });
    const critic = new Gpt(be, vc, spreadParams(vc, 5));
    const fam = await CharFamilyTrainable.create(critic);
    const lm = critic.withHead('lm');
    const exp = makeExperience(be, { actor: lm, reference: lm, critic }, r, new Float64Array(r.B).fill(1), 0, cfg);
    const mb = gatherMinibatch(
      be,
      exp,
      Int32Array.from({ length: r.B }, (_, i) => i),
    );
    const opt = { lr: 3e-3, beta1: 0.9, beta2: 0.99, eps: 1e-8, weightDecay: 0.1, maxGradNorm: 1 };
    const read = async (m: SequenceModel) => {
      const out = m.infer(mb.sequences, mb.attnMask, mb.positions);
      const x = await be.read(out);
      be.dispose(out);
      return x;
    };
    const made: Gpt[] = [lm];
    try {
      for (let i = 0; i < 2; i++) be.dispose(...Object.values(criticStep(fam, mb, r.P, r.A, cfg, opt)));
      const t = fam.stateTensors();
      const [params, m, v] = (await be.readMany([t.params, t.m, t.v])).map((x) => fam.toGptLayout(x));
      const st = { params, m, v, steps: fam.steps };
      expect(st.steps).toBe(2);
      expect(Math.max(...st.m.map(Math.abs)), 'moments after two steps').toBeGreaterThan(0);
      const back = new Gpt(be, vc, st.params);
      back.setState(st.params, st.m, st.v, st.steps);
      made.push(back);
      expectClose(await read(back), await read(fam), 0, atol, 'a Gpt from the trained family state against the family');
      // and in: the state set from the character model's layout gives the same next step
      const next = async (m: TrainableSequenceModel<unknown>) => {
        const s = criticStep(m, mb, r.P, r.A, cfg, opt);
        const [v] = await be.readMany([s.value]);
        be.dispose(...Object.values(s));
        return [...v, ...(await read(m))];
      };
      const again = await CharFamilyTrainable.create(critic); // other weights, zero moments
      again.setState(st.params, st.m, st.v, st.steps);
      expectClose(await next(again), await next(fam), 0, 0, 'a step from the state set in the character layout against the step it was read from');
      again.dispose();
      expect(() => fam.setState(st.params.subarray(1), st.m, st.v, 2)).toThrow(/setState: params has \d+ values/);
    } finally {
      disposeMinibatch(be, mb);
      disposeExperience(be, exp);
      fam.dispose();
      for (const m of made) m.dispose();
      critic.dispose();
    }
  });

  // The trainable family carries the reward head (tests/gpu/rm_families.test.ts); a frozen SequenceModel cannot.
  it('a frozen reward model, read at one position per row, is refused by name', async () => {
    const be = await make();
    const reward = new Gpt(be, stopModel({ head: 'reward' }), 1);
    try {
      await expect(charFamilyModel(reward)).rejects.toThrow(/reward model reads one position per row/);
    } finally {
      reward.dispose();
    }
  });
});
