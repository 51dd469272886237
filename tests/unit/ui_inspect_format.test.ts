// The Inspect tab's pure helpers: table numbers, what-if field parsing against the config's
// ranges, and the trace's JSON round trip the test hook uses.
import { describe, expect, it } from 'vitest';
import { recomputeTrace } from '../../src/rl/inspect/index.ts';
import { differs, formatNumber, parseKnob, responseText, sameKnobs } from '../../src/ui/inspect/format.ts';
import { scanStepTex, STEP_COLUMNS } from '../../src/ui/inspect/steps.ts';
import { traceFromJson, traceToJson } from '../../src/store/traceJson.ts';
import { FORMULA_STEPS, gaeScanSteps } from '../../src/rl/inspect/index.ts';
import { buildTrace, knobs } from '../helpers/inspectTrace.ts';
import { rng } from '../helpers/random.ts';

describe('formatNumber', () => {
  it('shows 4 significant digits, exponents outside [1e-3, 1e4), a true minus sign, and a dash for none', () => {
    expect(formatNumber(0.123456)).toBe('0.1235');
    expect(formatNumber(-1.23456)).toBe('−1.235');
    expect(formatNumber(12.3456)).toBe('12.35');
    expect(formatNumber(1234.5)).toBe('1235');
    expect(formatNumber(0)).toBe('0');
    expect(formatNumber(-0)).toBe('0');
    expect(formatNumber(1.5e-5)).toBe('1.50e−5');
    expect(formatNumber(123456)).toBe('1.23e+5');
    expect(formatNumber(null)).toBe('—');
    expect(formatNumber(Number.NaN)).toBe('NaN');
    expect(formatNumber(Number.NEGATIVE_INFINITY)).toBe('−∞');
  });
  it('tells a what-if value apart only beyond float noise', () => {
    expect(differs(1, 1 + 1e-15)).toBe(false);
    expect(differs(1, 1.001)).toBe(true);
    expect(differs(null, 0)).toBe(true);
    expect(differs(null, null)).toBe(false);
  });
});

describe('parseKnob', () => {
  it('accepts values inside the config’s range and rejects others with the range in words', () => {
    expect(parseKnob('clipLow', '0.1')).toEqual({ ok: true, value: 0.1 });
    expect(parseKnob('clipLow', '0')).toEqual({ ok: false, range: 'a number from 0 (exclusive) to 1 (exclusive)' });
    expect(parseKnob('clipLow', '1').ok).toBe(false);
    expect(parseKnob('clipLow', 'abc').ok).toBe(false);
    expect(parseKnob('clipLow', '').ok).toBe(false);
    expect(parseKnob('gamma', '1')).toEqual({ ok: true, value: 1 });
    expect(parseKnob('klCoef', '-0.1').ok).toBe(false);
    expect(parseKnob('klCoef', 'Infinity').ok).toBe(false);
  });
  it('reads an empty dual clip as off, and a c ≤ 1 as out of range', () => {
    expect(parseKnob('dualClip', '  ')).toEqual({ ok: true, value: null });
    expect(parseKnob('dualClip', '1').ok).toBe(false);
    expect(parseKnob('dualClip', '3')).toEqual({ ok: true, value: 3 });
  });
});

describe('helpers', () => {
  it('compares knobs and joins a response’s action tokens', () => {
    expect(sameKnobs(knobs(), knobs())).toBe(true);
    expect(sameKnobs(knobs(), knobs({ clipLow: 0.1 }))).toBe(false);
    expect(responseText(['a', 'b', '', 'c', 'd', ''], [1, 1, 0, 1, 0, 0], 0, 3)).toBe('ab');
    expect(responseText(['a', 'b', '', 'c', 'd', ''], [1, 1, 0, 1, 0, 0], 1, 3)).toBe('c');
  });
  it('names columns to highlight for every walk-through step', () => {
    for (const s of FORMULA_STEPS) expect(STEP_COLUMNS[s.id].length).toBeGreaterThan(0);
  });
  it('writes the scan at a masked position as a carry and at an action token with its numbers', () => {
    const trace = buildTrace(rng(901), { holeRow: 1 });
    const steps = gaeScanSteps(trace, 1);
    const hole = steps.find((s) => s.masked)!;
    expect(scanStepTex(hole, true, 1)).toBe(`A_{${hole.t}} = A_{${hole.t + 1}} = ${scanStepTex(hole, true, 1).split(' = ')[2]}`);
    const action = steps.find((s) => !s.masked)!;
    expect(scanStepTex(action, true, 1)).toMatch(/^\\delta_\{\d+\} = .*A_\{\d+\} = /);
  });
});

describe('traceJson', () => {
  it('round-trips a trace through JSON to the same recomputation', () => {
    const trace = buildTrace(rng(902), { holeRow: 2, knobs: { useKlLoss: true, tisCap: 2 } });
    const c = {
      runId: 'r',
      trace,
      prompts: trace.scores.length ? Array.from({ length: trace.B }, (_, b) => `p${b}`) : [],
      tokenText: Array.from({ length: trace.B * trace.A }, () => 'x'),
    };
    const back = traceFromJson(JSON.parse(JSON.stringify(traceToJson(c))));
    expect(back.trace.oldLogprobs).toBeInstanceOf(Float64Array);
    expect(back.trace.minibatches[0].rows).toBeInstanceOf(Int32Array);
    expect(recomputeTrace(back.trace).summary).toEqual(recomputeTrace(trace).summary);
  });
  it('rejects a trace whose arrays disagree with its shape', () => {
    const trace = buildTrace(rng(903));
    const j = traceToJson({ runId: 'r', trace, prompts: [], tokenText: [] });
    j.trace.oldLogprobs = j.trace.oldLogprobs.slice(1);
    expect(() => traceFromJson(j)).toThrow(/oldLogprobs/);
  });
});
