// "Run both" across a reload: the stored sequence reads back only when every field is valid, and
// the offer after a reload picks the right arm: the arm in progress resumes when the saved trainer
// state is its run's, an arm that reached its budget counts as finished, a finished sequence is
// not offered.
import { describe, expect, it } from 'vitest';
import { checked, DEFAULT_CONFIG } from '../../src/rl/config.ts';
import type { RunSequence } from '../../src/store/appStore.ts';
import { parseSequence, sequenceOffer } from '../../src/store/sequencePersist.ts';

const seq: RunSequence = {
  preset: 'Tight vs loose clipping',
  arms: [
    { label: 'ε = 0.05', config: checked({ ...DEFAULT_CONFIG, clipLow: 0.05 }) },
    { label: 'ε = 0.5', config: checked({ ...DEFAULT_CONFIG, clipLow: 0.5 }) },
  ],
  index: 1,
  budget: 60,
  runId: 'run-b',
};
const runs = (nA: number, nB: number) => [
  { id: 'run-a', metrics: Array.from({ length: nA }, (_, i) => ({ iter: i, values: {} })) },
  { id: 'run-b', metrics: Array.from({ length: nB }, (_, i) => ({ iter: i, values: {} })) },
];

describe('Run both: the stored record', () => {
  it('reads back what was written', () => {
    expect(parseSequence(JSON.stringify(seq))).toEqual(seq);
    const { runId: _, ...noRun } = seq;
    expect(parseSequence(JSON.stringify({ ...noRun, index: 0 }))).toEqual({ ...noRun, index: 0 });
  });

  it.each([
    ['not JSON', '{', /not JSON/],
    ['an array', '[]', /not an object/],
    ['no preset', JSON.stringify({ ...seq, preset: '' }), /preset name missing/],
    ['no arms', JSON.stringify({ ...seq, arms: [] }), /arms missing/],
    ['an arm without a config', JSON.stringify({ ...seq, arms: [{ label: 'x' }] }), /arm 1 malformed/],
    ['an arm with an invalid config', JSON.stringify({ ...seq, arms: [seq.arms[0], { label: 'bad', config: { ...DEFAULT_CONFIG, clipLow: -1 } }] }), /arm 2 \(bad\): .*clipLow/],
    ['an index past the arms', JSON.stringify({ ...seq, index: 2 }), /arm index out of range/],
    ['a fractional budget', JSON.stringify({ ...seq, budget: 2.5 }), /budget must be an integer/],
    ['a run id that is not a string', JSON.stringify({ ...seq, runId: 5 }), /run id malformed/],
  ])('refuses %s with a named error', (_what, text, message) => {
    expect(() => parseSequence(text)).toThrow(message);
  });
});

describe('Run both: what a reload offers', () => {
  it('the arm in progress resumes from the saved state when that state is its run', () => {
    expect(sequenceOffer(seq, runs(60, 23), { runId: 'run-b', iter: 20 })).toEqual({ seq, done: 20, resumable: true });
  });

  it('without its state the arm trains again from the start (a new run)', () => {
    const offer = sequenceOffer(seq, runs(60, 23), { runId: 'someone-else', iter: 5 });
    expect(offer).toEqual({ seq: { ...seq, runId: undefined }, done: 0, resumable: false });
    expect(offer!.seq).not.toHaveProperty('runId');
    expect(sequenceOffer(seq, runs(60, 23), null)!.resumable).toBe(false);
  });

  it('an arm that reached its budget is finished: the next one is offered, or nothing after the last', () => {
    const first = { ...seq, index: 0, runId: 'run-a' };
    const next = sequenceOffer(first, runs(60, 0), { runId: 'run-a', iter: 60 });
    expect(next).toMatchObject({ seq: { index: 1 }, done: 0, resumable: false });
    expect(next!.seq.runId).toBeUndefined();
    expect(sequenceOffer(seq, runs(60, 60), { runId: 'run-b', iter: 60 })).toBeNull();
  });

  it('an arm whose run was deleted trains again', () => {
    expect(sequenceOffer(seq, [], { runId: 'run-b', iter: 3 })).toMatchObject({ seq: { index: 1 }, resumable: false });
  });
});

describe('Run both: storage that throws', () => {
  it('loadSequence reports no sequence instead of throwing when the browser refuses storage', async () => {
    const { loadSequence } = await import('../../src/store/sequencePersist.ts');
    const refusing = {
      getItem: () => {
        throw new DOMException('denied', 'SecurityError');
      },
      removeItem: () => {
        throw new DOMException('denied', 'SecurityError');
      },
    };
    const g = globalThis as { localStorage?: unknown };
    const before = g.localStorage;
    g.localStorage = refusing;
    try {
      expect(loadSequence()).toEqual({ seq: null });
    } finally {
      g.localStorage = before;
    }
  });
});
