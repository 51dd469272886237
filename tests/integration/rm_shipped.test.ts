// The shipped sentiment reward model (public/checkpoints/sentiment_rm.safetensors) orders
// held-out pairs the way the lexicon does.
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { RewardModel } from '../../src/rl/rewardModel/rewardModel.ts';
import { lexiconScore, sentimentTask } from '../../src/tasks/sentiment.ts';
import { cpuBackend } from '../helpers/backends.ts';
import { rng } from '../helpers/random.ts';

const ALPHABET = sentimentTask.alphabet;
const SHIPPED = new URL('../../public/checkpoints/sentiment_rm.safetensors', import.meta.url);

describe('shipped sentiment reward model', () => {
  it('exists and orders held-out pairs like the lexicon', async () => {
    expect(existsSync(SHIPPED), 'public/checkpoints/sentiment_rm.safetensors (npm run train-rm)').toBe(true);
    const rm = RewardModel.fromCheckpoint(cpuBackend, new Uint8Array(readFileSync(SHIPPED)), { alphabet: ALPHABET, task: 'sentiment' });
    const r = rng(62);
    const pairs = Array.from({ length: 128 }, () => {
      const p = sentimentTask.preferencePair(r);
      return lexiconScore(p.chosen) > lexiconScore(p.rejected) ? p : { ...p, chosen: p.rejected, rejected: p.chosen };
    });
    const acc = await rm.accuracy(pairs);
    console.log(`[rm_shipped] shipped reward model: held-out accuracy ${acc.toFixed(3)} (lexicon order)`);
    expect(acc).toBeGreaterThanOrEqual(0.8);
    rm.dispose();
  });
});
