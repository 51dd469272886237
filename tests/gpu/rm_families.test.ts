// The learned reward model (src/rl/rewardModel/rewardModel.ts) in either model family: the
// character model's own Gpt, or the same weights on HfModel as the GPT-2 they are, its reward head
// read at each row's last real token (src/model/hf/charFamily.ts, src/model/scoreAt.ts). Scores of
// preference pairs and of a rollout's layout, Bradley–Terry training steps (BT → reward head → trunk
// → AdamW), fine-tuning on labels, the trunk from an SFT checkpoint and the checkpoint it writes.
// Bounds: on the float64 CPU backend scores agree within 1e-12, training statistics within 1e-9
// relative / 1e-12 absolute (the two sum a gradient norm in another order), the checkpoints' float32
// weights at most one float32 rounding apart (as tests/gpu/sft_families.test.ts). On WebGPU the f32
// kernels differ: scores and statistics within 2e-5 (char_family.test.ts's bound for the same
// layers), weights within 1e-4 (sft_run_backends.test.ts's for a few AdamW steps) but for the
// parameters no BT loss moves (shiftInvariant, below). Measured (this file's printout, 2026-12-02):
// statistics 9.5e-7 on SwiftShader, 2.9e-6 on lavapipe; weights 1.5e-6 and 8e-7.
import { describe, expect, it } from 'vitest';
import type { Backend } from '../../src/backend/backend.ts';
import type { GptConfig } from '../../src/model/config.ts';
import { parseCheckpoint, saveCheckpoint } from '../../src/model/checkpoint.ts';
import { Gpt } from '../../src/model/gpt.ts';
import { RewardModel } from '../../src/rl/rewardModel/rewardModel.ts';
import type { ModelFamily } from '../../src/rl/trainerModels.ts';
import { sentimentTask } from '../../src/tasks/sentiment.ts';
import { BACKENDS, cpuBackend } from '../helpers/backends.ts';
import { randomParams } from '../helpers/model.ts';
import { pairsFrom } from '../helpers/preferences.ts';
import { expectClose, rng } from '../helpers/random.ts';
import { tinyCheckpoint } from '../helpers/rl.ts';

const ALPHABET = sentimentTask.alphabet;
const cfg: GptConfig = { vocabSize: 3 + ALPHABET.length, nLayer: 2, nHead: 2, dModel: 32, maxSeq: 48, head: 'reward' };
const FAMILIES: ModelFamily[] = ['gpt', 'hf'];

/**
 * Parameters no Bradley–Terry loss can move: it reads score differences, and these add the same
 * amount to every score (the reward head's bias, the final norm's β through the head) or to every
 * attention logit of a query (the key bias). Their gradient is zero in exact arithmetic and rounding
 * noise in f32, which AdamW (ε = 1e-8) turns into steps of up to ±lr whose signs each kernel's
 * rounding picks: compared on float64 only.
 */
function shiftInvariant(key: string, i: number): boolean {
  const D = cfg.dModel;
  return key === 'reward_head.bias' || key === 'ln_f.bias' || (/\.attn\.c_attn\.bias$/.test(key) && i >= D && i < 2 * D);
}

/** The largest difference of the two checkpoints' weights, as a fraction of its bound (≤ 1 passes). */
function weightExcess(a: Uint8Array, b: Uint8Array, cpu: boolean): number {
  const [x, y] = [parseCheckpoint(a), parseCheckpoint(b)];
  expect(y.config).toEqual(x.config);
  expect([...y.params.keys()]).toEqual([...x.params.keys()]);
  let worst = 0;
  for (const [key, t] of x.params) {
    const u = y.params.get(key)!.data;
    t.data.forEach((v, i) => {
      if (!cpu && shiftInvariant(key, i)) return;
      const bound = cpu ? 2 ** -23 * Math.max(Math.abs(v), Math.abs(u[i]), 2 ** -10) : 1e-4;
      worst = Math.max(worst, Math.abs(v - u[i]) / bound);
    });
  }
  return worst;
}

describe.each(BACKENDS)('the reward model in either family on %s', (name, makeBackend) => {
  const cpu = name === 'cpu';
  const [rtol, atol] = cpu ? [1e-9, 1e-12] : [0, 2e-5];

  it('scores pairs and a rollout layout alike, and a reward head on an lm checkpoint is refused', { timeout: 120_000 }, async () => {
    const be = await makeBackend();
    const params = randomParams(cfg, rng(71));
    const pairs = [...pairsFrom(72, 6), { prompt: 'the room was', chosen: '.', rejected: ' dull.' }]; // a one-token response too
    const [gpt, hf] = FAMILIES.map((f) => RewardModel.withParams(be, cfg, params, ALPHABET, 'sentiment', f));
    const [a, b] = [await gpt.scorePairs(pairs), await hf.scorePairs(pairs)];
    expectClose(b.chosen, a.chosen, 0, cpu ? 1e-12 : 2e-5, 'chosen scores');
    expectClose(b.rejected, a.rejected, 0, cpu ? 1e-12 : 2e-5, 'rejected scores');
    expect(Math.max(...a.chosen.map(Math.abs))).toBeGreaterThan(0.05); // scores spread: a wrong read position shows
    // score(): rows read at arbitrary last positions, as PPO's rollout layout gives them
    const r = rng(73);
    const [B, S] = [5, 12];
    const tokens = Int32Array.from({ length: B * S }, () => r.int(0, cfg.vocabSize));
    const mask = Float64Array.from({ length: B * S }, (_, i) => (i % S < 2 * (Math.floor(i / S) % 2) ? 0 : 1)); // left padding on odd rows
    const positions = Int32Array.from({ length: B * S }, (_, i) => {
      const row = Math.floor(i / S);
      let p = -1;
      for (let j = row * S; j <= i; j++) p += mask[j];
      return Math.max(p, 0);
    });
    const lastIndex = Array.from({ length: B }, () => r.int(2, S));
    const scoreOf = async (rm: RewardModel) => {
      const t = [be.tensor(tokens, [B, S], 'i32'), be.tensor(mask, [B, S]), be.tensor(positions, [B, S], 'i32')] as const;
      const out = rm.score(...t, lastIndex);
      const host = await be.read(out);
      be.dispose(out, ...t);
      return host;
    };
    expectClose(await scoreOf(hf), await scoreOf(gpt), 0, cpu ? 1e-12 : 2e-5, 'rollout-layout scores');
    expect(() => hf.score(be.tensor(tokens, [B, S], 'i32'), be.tensor(mask, [B, S]), be.tensor(positions, [B, S], 'i32'), [0, 1])).toThrow(/one position per row/);
    gpt.dispose();
    hf.dispose();
    const lm = await tinyCheckpoint('sentiment', 4);
    for (const f of FAMILIES) expect(() => RewardModel.fromCheckpoint(be, lm, {}, f), f).toThrow(/'lm' head, not a reward model/);
  });

  it('trains alike from an SFT trunk: BT steps, label fine-tuning and the checkpoint', { timeout: 240_000 }, async () => {
    const be = await makeBackend();
    const sft = await saveCheckpoint(new Gpt(cpuBackend, { ...cfg, head: 'lm' }, 6), { alphabet: ALPHABET, task: 'sentiment' }); // an SFT trunk long enough for the pairs
    const heldOut = pairsFrom(81, 8);
    const run = async (family: ModelFamily) => {
      const rm = RewardModel.fromSft(be as Backend, sft, 12, family);
      const log = await rm.train((g) => sentimentTask.preferencePair(g), {
        steps: 4,
        seed: 13,
        pairsPerStep: 6,
        peakLr: 3e-3,
        warmupSteps: 1,
        minRatio: 0.1,
        optimizer: { beta1: 0.9, beta2: 0.99, eps: 1e-8, weightDecay: 0.01, maxGradNorm: 1 },
        evalEvery: 2,
        heldOut,
      });
      const labels = await rm.trainOnLabels(pairsFrom(82, 5), { epochs: 2, pairsPerStep: 3 });
      const bytes = await rm.checkpoint();
      rm.dispose();
      return { log, labels, bytes };
    };
    const [gpt, hf] = [await run('gpt'), await run('hf')];
    const stats = (r: typeof gpt) => [
      ...r.log.flatMap((l) => [l.loss, l.accuracy, l.marginMean, l.gradNorm, l.heldOutAccuracy ?? -1]),
      r.labels.before.loss,
      r.labels.before.accuracy,
      r.labels.after.loss,
      r.labels.after.accuracy,
    ];
    expect(hf.labels.steps).toBe(gpt.labels.steps);
    expect(gpt.log.map((l) => l.heldOutAccuracy)).toEqual([undefined, expect.any(Number), undefined, expect.any(Number)]);
    expect(gpt.labels.after.loss).not.toBe(gpt.labels.before.loss); // the labels moved it
    expectClose(stats(hf), stats(gpt), rtol, atol, 'training statistics');
    const excess = weightExcess(gpt.bytes, hf.bytes, cpu);
    const statDiff = Math.max(...stats(hf).map((v, i) => Math.abs(v - stats(gpt)[i])));
    console.log(`reward model gpt vs hf on ${be.label}: worst weight difference ${excess.toFixed(3)} of its bound, max |Δ statistic| ${statDiff.toExponential(2)}`);
    expect(excess).toBeLessThanOrEqual(1);
    // the checkpoint the HF family wrote scores in the Gpt family as the HF family scores it
    const pairs = pairsFrom(83, 4);
    const [back, same] = [RewardModel.fromCheckpoint(be, hf.bytes, { alphabet: ALPHABET, task: 'sentiment' }, 'gpt'), RewardModel.fromCheckpoint(be, hf.bytes, {}, 'hf')];
    const [x, y] = [await back.scorePairs(pairs), await same.scorePairs(pairs)];
    expectClose([...y.chosen, ...y.rejected], [...x.chosen, ...x.rejected], 0, cpu ? 1e-12 : 2e-5, 'scores of the saved model');
    back.dispose();
    same.dispose();
  });
});
