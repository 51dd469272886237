// The named seed streams are the seeds the trainer always drew: a run from before they had names
// resumes and reproduces bit-exactly.
import { describe, expect, it } from 'vitest';
import { criticHeadSeed, deriveSeed, evalSeed, minibatchOrderSeed, promptSeed, rolloutSeed } from '../../src/util/seedStreams.ts';

describe('named seed streams', () => {
  it('equal the derivations they replaced, for several seeds, iterations and rounds', () => {
    for (const seed of [0, 1, 7, 123456789]) {
      expect(criticHeadSeed(seed)).toBe(deriveSeed(seed, 0x63726974));
      expect(evalSeed(seed)).toBe(deriveSeed(seed, 0x6576616c));
      for (const iter of [0, 1, 41]) {
        expect(promptSeed(seed, iter)).toBe(deriveSeed(seed, iter, 0x7072));
        expect(rolloutSeed(seed, iter)).toBe(deriveSeed(seed, iter, 0x726f6c6c));
        for (const round of [1, 3]) {
          expect(promptSeed(seed, iter, round)).toBe(deriveSeed(seed, iter, 0x7072, round));
          expect(rolloutSeed(seed, iter, round)).toBe(deriveSeed(seed, iter, 0x726f6c6c, round));
        }
        for (const epoch of [0, 2]) expect(minibatchOrderSeed(seed, iter, epoch)).toBe(deriveSeed(seed, iter, epoch, 0x6d62));
      }
    }
  });

  it('keeps deriveSeed itself fixed', () => {
    expect([deriveSeed(1, 0x63726974), deriveSeed(1, 0, 0x726f6c6c), deriveSeed(1, 5, 0, 0x6d62)]).toEqual([1955634768, 3238370679, 2137661288]);
  });
});
