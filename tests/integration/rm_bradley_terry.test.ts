// Bradley–Terry loss of the reward model:
//   * the host loss/gradient against the textbook float64 formula and central finite differences,
//     plus edge cases (Δ = ±1e4, ties, one pair, non-finite scores rejected);
//   * the whole reward model (BT → reward head → trunk) against finite differences of the BT loss
//     on the float64 CPU backend.
// WebGPU against this CPU model: tests/gpu/rm_bradley_terry.test.ts.
import { describe, expect, it } from 'vitest';
import { cpu } from '../../src/backend/cpu/cpuTensor.ts';
import type { GptConfig } from '../../src/model/config.ts';
import { bradleyTerry, sigmoid, softplus } from '../../src/rl/rewardModel/bradleyTerry.ts';
import { encodePairs } from '../../src/rl/rewardModel/pairs.ts';
import { RewardModel } from '../../src/rl/rewardModel/rewardModel.ts';
import { sentimentTask } from '../../src/tasks/sentiment.ts';
import type { PreferencePair } from '../../src/tasks/task.ts';
import { cpuBackend } from '../helpers/backends.ts';
import { randomParams, rewardGpt } from '../helpers/model.ts';
import { pairsFrom } from '../helpers/preferences.ts';
import { expectClose, randn, rng } from '../helpers/random.ts';

const ALPHABET = sentimentTask.alphabet;
const cfg: GptConfig = { vocabSize: 3 + ALPHABET.length, nLayer: 1, nHead: 2, dModel: 32, maxSeq: 40, head: 'reward' };

/** −(1/N) Σ log(1/(1 + e^−Δ)) written the obvious way (fine for moderate Δ). */
function naiveLoss(c: ArrayLike<number>, r: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < c.length; i++) s += -Math.log(1 / (1 + Math.exp(-(c[i] - r[i]))));
  return s / c.length;
}

describe('bradleyTerry (host, float64)', () => {
  it('matches the textbook formula and finite differences on random scores', () => {
    const r = rng(1);
    const N = 1 + r.int(1, 12);
    const c = randn(r, N, 3);
    const rej = randn(r, N, 3);
    const bt = bradleyTerry(c, rej);
    expect(Math.abs(bt.loss - naiveLoss(c, rej))).toBeLessThanOrEqual(1e-12 * Math.max(1, bt.loss));
    const h = 1e-6;
    const fdC = new Float64Array(N);
    const fdR = new Float64Array(N);
    for (let i = 0; i < N; i++) {
      const cp = Float64Array.from(c),
        cm = Float64Array.from(c);
      cp[i] += h;
      cm[i] -= h;
      fdC[i] = (naiveLoss(cp, rej) - naiveLoss(cm, rej)) / (2 * h);
      const rp = Float64Array.from(rej),
        rm = Float64Array.from(rej);
      rp[i] += h;
      rm[i] -= h;
      fdR[i] = (naiveLoss(c, rp) - naiveLoss(c, rm)) / (2 * h);
    }
    expectClose(bt.gradChosen, fdC, 1e-6, 1e-9, 'dL/dr_chosen');
    expectClose(bt.gradRejected, fdR, 1e-6, 1e-9, 'dL/dr_rejected');
    let correct = 0;
    for (let i = 0; i < N; i++) if (c[i] > rej[i]) correct++;
    expect(bt.accuracy).toBe(correct / N);
  });

  it('stays finite at Δ = ±1e4 and gives the limits', () => {
    const bt = bradleyTerry([1e4, -5e3, 0], [-0, 5e3, 1e4]);
    // pair 0: Δ = 1e4 → loss 0, grad 0; pair 1: Δ = −1e4 → loss 1e4, grad ∓1/N; pair 2: Δ = −1e4 too.
    expect(bt.loss).toBeCloseTo((0 + 1e4 + 1e4) / 3, 6);
    expectClose(bt.gradChosen, [0, -1 / 3, -1 / 3], 0, 1e-15, 'gradChosen');
    expectClose(bt.gradRejected, [0, 1 / 3, 1 / 3], 0, 1e-15, 'gradRejected');
    expect(bt.accuracy).toBeCloseTo(1 / 3, 12);
    expect(softplus(-1e300)).toBe(0);
    expect(softplus(1e300)).toBe(1e300);
    expect(sigmoid(-1e4)).toBe(0);
    expect(sigmoid(1e4)).toBe(1);
  });

  it('a tie costs ln 2, pulls the sides apart with ∓½/N and is not counted correct', () => {
    const bt = bradleyTerry([0.25], [0.25]);
    expect(bt.loss).toBeCloseTo(Math.LN2, 14);
    expect(bt.gradChosen[0]).toBeCloseTo(-0.5, 14);
    expect(bt.gradRejected[0]).toBeCloseTo(0.5, 14);
    expect(bt.accuracy).toBe(0);
  });

  it('rejects non-finite scores and mismatched lengths instead of producing NaN', () => {
    expect(() => bradleyTerry([NaN], [0])).toThrow(/pair 0/);
    expect(() => bradleyTerry([Infinity], [Infinity])).toThrow(/pair 0/);
    expect(() => bradleyTerry([1, 2], [0])).toThrow(/2 chosen scores but 1 rejected/);
    expect(() => bradleyTerry([], [])).toThrow(/no pairs/);
  });
});

describe('encodePairs', () => {
  it('puts chosen rows first, left-pads, and scores every row at its EOS in the last column', () => {
    const tok = RewardModel.fresh(cpuBackend, cfg, ALPHABET, 'sentiment', 0).tok;
    const pairs: PreferencePair[] = [
      { prompt: 'the food was', chosen: ' great.', rejected: ' really bad.' },
      { prompt: 'the film is', chosen: ' good and fun.', rejected: ' sad.' },
    ];
    const b = encodePairs(tok, pairs, cfg.maxSeq);
    expect(b.N).toBe(2);
    expect(b.S).toBe(1 + 'the film is'.length + ' good and fun.'.length + 1);
    for (let row = 0; row < 4; row++) {
      expect(b.tokens[row * b.S + b.S - 1]).toBe(tok.eosId);
      expect(b.scoreAt[row]).toBe(b.S - 1);
    }
    const text = (row: number) => tok.decode(b.tokens.subarray(row * b.S, (row + 1) * b.S));
    expect(text(0)).toBe('the food was great.');
    expect(text(1)).toBe('the film is good and fun.');
    expect(text(2)).toBe('the food was really bad.');
    expect(text(3)).toBe('the film is sad.');
    // the longest row has no padding; positions restart at 0 on each row's BOS
    expect(b.attnMask.subarray(1 * b.S, 2 * b.S).every((m) => m === 1)).toBe(true);
    const pad3 = b.S - (1 + 'the film is sad.'.length + 1);
    expect(b.positions[3 * b.S + pad3]).toBe(0);
    expect(b.attnMask[3 * b.S + pad3 - 1]).toBe(0);
    expect(() => encodePairs(tok, pairs, 10)).toThrow(/exceeds the reward model's maxSeq 10/);
  });
});

/** BT loss of `pairs` under the CPU model's current parameters (no gradient). */
async function btLoss(rm: RewardModel, pairs: PreferencePair[]): Promise<number> {
  const { chosen, rejected } = await rm.scorePairs(pairs);
  return bradleyTerry(chosen, rejected).loss;
}

describe('reward model gradient (BT → reward head → trunk)', () => {
  it('CPU analytic gradients match central finite differences of the BT loss', async () => {
    const r = rng(7);
    const rm = RewardModel.withParams(cpuBackend, cfg, randomParams(cfg, r), ALPHABET, 'sentiment');
    const gpt = rewardGpt(rm);
    // one pair of a single-character response: the shortest sequences the task produces
    const pairs = [...pairsFrom(8, 3), { prompt: 'the room was', chosen: '.', rejected: ' dull.' }];
    gpt.zeroGrad();
    const bt = await rm.lossAndBackward(pairs);
    expect(bt.loss).toBeCloseTo(await btLoss(rm, pairs), 12);
    const grads = await cpuBackend.read(gpt.grads);
    const flat = cpu(gpt.params).data;
    const h = 1e-5;
    let checked = 0;
    for (const e of gpt.layout.entries) {
      for (let k = 0; k < 3; k++) {
        const i = e.offset + r.int(0, e.size);
        const keep = flat[i];
        flat[i] = keep + h;
        const lp = await btLoss(rm, pairs);
        flat[i] = keep - h;
        const lm = await btLoss(rm, pairs);
        flat[i] = keep;
        const fd = (lp - lm) / (2 * h);
        expect(Math.abs(grads[i] - fd), `${e.name}[${i - e.offset}]: analytic ${grads[i]} vs fd ${fd}`).toBeLessThanOrEqual(1e-6 + 1e-5 * Math.abs(fd));
        checked++;
      }
    }
    expect(checked).toBe(3 * gpt.layout.entries.length);
    rm.dispose();
  });
});
