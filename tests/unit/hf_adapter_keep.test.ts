// The kept adapter's record (src/store/hfAdapterKeep.ts) as its file holds it: written and read
// back it is the same record, the last iteration's trace with its typed arrays number for number;
// a record kept before traces were reads as it was; a trace that does not read is left out and
// the run still continues; a record that is not one is not offered.
import { describe, expect, it } from 'vitest';
import { type KeptAdapterRecord, keptRecordText, readKeptRecord } from '../../src/store/hfAdapterKeep.ts';
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
});
