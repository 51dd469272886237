// The kept adapter's record (src/store/hfAdapterKeep.ts) as its file holds it: written and read
// back it is the same record, the last iteration's trace with its typed arrays number for number;
// a record kept before traces were reads as it was; a trace that does not read is left out and
// the run still continues; a record that is not one is not offered.
import { describe, expect, it } from 'vitest';
import { comparedToKeep, type KeptAdapterRecord, keptRecordText, readKeptRecord, runBothLeft } from '../../src/store/hfAdapterKeep.ts';
import { HF_PRESETS } from '../../src/rl/hf/hfPresets.ts';
import { hfRecordedRun } from '../helpers/hfRunFixture.ts';
import { rng } from '../helpers/random.ts';

function record(seed: number): KeptAdapterRecord {
  const run = hfRecordedRun(rng(seed), 3);
  return { label: 'tiny qwen', iterations: 3, settings: run.settings, rows: run.rows, evals: run.evals, savedAt: 1_764_547_200_000, lastTrace: run.lastTrace };
}

describe('the kept adapter’s record', () => {
  it('reads back as written, the trace’s typed arrays number for number', () => {
    const r = record(1);
    const back = readKeptRecord(keptRecordText(r));
    expect(back).toEqual(r);
    expect(back?.lastTrace?.trace.oldLogprobs).toBeInstanceOf(Float64Array);
    expect(Array.from(back!.lastTrace!.trace.minibatches[1].newLogprobs)).toEqual(Array.from(r.lastTrace!.trace.minibatches[1].newLogprobs));
  });

  it('a record without a trace reads as it was; a damaged trace is left out, the rest kept', () => {
    const { lastTrace: _t, ...old } = record(2);
    expect(readKeptRecord(JSON.stringify(old))).toEqual(old);
    const doc = JSON.parse(keptRecordText(record(3)));
    doc.lastTrace.trace.iter = 2; // not the record's iteration
    const back = readKeptRecord(JSON.stringify(doc));
    expect(back?.lastTrace).toBeUndefined();
    expect(back?.rows).toHaveLength(3);
    doc.lastTrace.trace.iter = 3;
    doc.lastTrace.trace.knobs.gamma = 'one';
    expect(readKeptRecord(JSON.stringify(doc))?.lastTrace).toBeUndefined();
  });

  it('a record that is not one is not offered', () => {
    expect(readKeptRecord(JSON.stringify({ label: 3, iterations: 1, rows: [], settings: {} }))).toBeNull();
    expect(readKeptRecord(JSON.stringify({ label: 'x', iterations: 1, rows: {}, settings: {} }))).toBeNull();
  });

  it('keeps the earlier runs’ rows (their numbers, not their responses) and a Run both under way; a damaged one is left out, the rest kept', () => {
    const r = record(4);
    const earlier = hfRecordedRun(rng(5), 2);
    const arms = HF_PRESETS.map((p) => ({ ...p.settings, iterations: 5 }));
    const withBoth: KeptAdapterRecord = { ...r, compared: comparedToKeep([{ model: 'tiny qwen', settings: earlier.settings, rows: earlier.rows }]), runBoth: { arm: 1, arms } };
    expect(withBoth.compared![0].rows.every((row) => row.responses.length === 0)).toBe(true);
    expect(withBoth.compared![0].rows.map((row) => row.reward_mean)).toEqual(earlier.rows.map((row) => row.reward_mean));
    expect(readKeptRecord(keptRecordText(withBoth))).toEqual(withBoth);
    const doc = JSON.parse(keptRecordText(withBoth));
    doc.runBoth.arm = 2; // past the last arm
    doc.compared[0].settings.lr = -1;
    const back = readKeptRecord(JSON.stringify(doc));
    expect([back?.runBoth, back?.compared]).toEqual([undefined, undefined]);
    expect(back?.rows).toEqual(r.rows);
  });

  it('says what of a Run both is left: the rest of its arm, then the arms after it; nothing once the last arm is done', () => {
    const arms = HF_PRESETS.map((p) => ({ ...p.settings, iterations: 5 }));
    expect(runBothLeft({ iterations: 3, runBoth: { arm: 0, arms } })).toEqual({ arm: 0, arms, iterations: 2 });
    expect(runBothLeft({ iterations: 5, runBoth: { arm: 0, arms } })).toEqual({ arm: 0, arms, iterations: 0 });
    expect(runBothLeft({ iterations: 4, runBoth: { arm: 1, arms } })).toEqual({ arm: 1, arms, iterations: 1 });
    expect(runBothLeft({ iterations: 5, runBoth: { arm: 1, arms } })).toBeNull();
    expect(runBothLeft({ iterations: 5 })).toBeNull();
  });
});
