// RewardModel.score — the API PPO calls — reads the same score from a rollout's layout (prompt
// left-padded, response right-padded with PAD, lastIndex at the EOS) as from the training layout
// (whole sequence left-padded, EOS in the last column).
import { describe, expect, it } from 'vitest';
import type { GptConfig } from '../../src/model/config.ts';
import { RewardModel } from '../../src/rl/rewardModel/rewardModel.ts';
import { sentimentTask } from '../../src/tasks/sentiment.ts';
import type { PreferencePair } from '../../src/tasks/task.ts';
import { BACKENDS } from '../helpers/backends.ts';
import { expectClose, rng } from '../helpers/random.ts';
import { randomParams } from '../helpers/model.ts';

const ALPHABET = sentimentTask.alphabet;
const cfg: GptConfig = { vocabSize: 3 + ALPHABET.length, nLayer: 1, nHead: 2, dModel: 32, maxSeq: 48, head: 'reward' };

describe.each(BACKENDS)('RewardModel.score on %s', (_name, makeBackend) => {
  it('gives the pair-batch score from a rollout layout with lastIndex at EOS (and at a truncated last token)', async () => {
    const be = await makeBackend();
    const r = rng(61);
    const rm = RewardModel.withParams(be, cfg, randomParams(cfg, r), ALPHABET, 'sentiment');
    const pairs: PreferencePair[] = Array.from({ length: 3 }, () => sentimentTask.preferencePair(r));
    pairs.push({ prompt: 'the book is', chosen: '.', rejected: ' boring and dull.' }); // one-token response
    const want = await rm.scorePairs(pairs);

    // Rollout layout: P = widest prompt, A = longest response + EOS; rows are chosen then rejected.
    const tok = rm.tok;
    const rows = [...pairs.map((p) => [p.prompt, p.chosen]), ...pairs.map((p) => [p.prompt, p.rejected])];
    const prompts = rows.map(([p]) => tok.encodePrompt(p));
    const responses = rows.map(([, x]) => [...tok.encode(x), tok.eosId]);
    const P = Math.max(...prompts.map((p) => p.length));
    const A = Math.max(...responses.map((x) => x.length)) + 2; // trailing PAD on every row
    const S = P + A;
    const B = rows.length;
    const seq = new Int32Array(B * S),
      mask = new Float32Array(B * S),
      pos = new Int32Array(B * S);
    const last = new Int32Array(B);
    rows.forEach((_, b) => {
      const p = prompts[b],
        x = responses[b];
      p.forEach((t, j) => {
        const c = P - p.length + j;
        seq[b * S + c] = t;
        mask[b * S + c] = 1;
        pos[b * S + c] = j;
      });
      x.forEach((t, j) => {
        seq[b * S + P + j] = t;
        mask[b * S + P + j] = 1;
        pos[b * S + P + j] = p.length + j;
      });
      last[b] = P + x.length - 1;
    });
    const tSeq = be.tensor(seq, [B, S], 'i32'),
      tMask = be.tensor(mask, [B, S]),
      tPos = be.tensor(pos, [B, S], 'i32');
    const got = await be.read(rm.score(tSeq, tMask, tPos, last));
    expectClose(got.subarray(0, pairs.length), want.chosen, 1e-5, 1e-5, 'chosen scores');
    expectClose(got.subarray(pairs.length), want.rejected, 1e-5, 1e-5, 'rejected scores');
    // Reading one token earlier (a response cut before its EOS) is a different, finite score.
    const early = await be.read(
      rm.score(
        tSeq,
        tMask,
        tPos,
        Array.from(last, (t) => t - 1),
      ),
    );
    expect(early.every(Number.isFinite)).toBe(true);
    expect(early[0]).not.toBeCloseTo(got[0], 6);
    expect(() => rm.score(tSeq, tMask, tPos, [0])).toThrow(/one position per row/);
    be.dispose(tSeq, tMask, tPos);
    rm.dispose();
  });
});
