// A captured iteration on the float64 CPU backend: every number the inspector shows equals its
// float64 recomputation from the trace's inputs to ~1e-9 relative (the two differ only in the
// order of floating-point sums), and capturing changes nothing the iteration computes.
import { describe, expect, it } from 'vitest';
import { CpuBackend } from '../../src/backend/cpu/cpuBackend.ts';
import { PpoTrainer } from '../../src/rl/trainer.ts';
import { CAPTURE_CASES, expectTraceMatches, runCapturedIterations, type CaptureTolerances } from '../helpers/captureCheck.ts';
import { tinyCheckpoint, tinyConfig } from '../helpers/rl.ts';
import { readRunFile, runFileText } from '../../src/store/runFile.ts';
import { traceToJson } from '../../src/store/traceJson.ts';
import type { RunRecord } from '../../src/store/runs.ts';
import type { PpoConfig } from '../../src/rl/config.ts';
import { traceBatch } from '../../src/store/traceBatch.ts';

const be = new CpuBackend();
const F64: CaptureTolerances = {
  elem: { rtol: 1e-9, atol: 1e-12 },
  scan: { rtol: 1e-9, atol: 1e-12 },
  reduce: { rtol: 1e-9, atol: 1e-12 },
  fraction: { rtol: 0, atol: 1e-12 },
};

describe('iteration capture (cpu)', () => {
  it.each(CAPTURE_CASES)('%s: the trace equals its float64 recomputation', async (_name, over) => {
    const traces = await runCapturedIterations(be, over, F64);
    // The second iteration's policy has moved from the reference, so its KL terms are not all 0.
    expect(traces[1].stored.kl.some((x) => x !== 0)).toBe(true);
  });

  it.each(CAPTURE_CASES)('%s: the traces read back from a run file equal the captured ones, every field', async (_name, over) => {
    const traces = await runCapturedIterations(be, over, F64);
    const run: RunRecord = { id: 'r', name: 'n', color: '#0072B2', visible: true, config: tinyConfig(over), backend: 'cpu', createdAt: 0, metrics: [] };
    const captured = traces.map((trace) => ({
      runId: 'r',
      trace,
      prompts: Array.from({ length: trace.B }, () => 'p'),
      tokenText: Array.from({ length: trace.B * trace.A }, () => 't'),
    }));
    const back = readRunFile(runFileText(run, null, captured)).traces;
    expect(back.map((t) => traceToJson({ ...t, runId: 'r' }))).toEqual(captured.map(traceToJson));
  });

  it.each([
    ['kl_cov', { lossMode: 'kl_cov', klCovRatio: 0.2 }],
    ['clip_cov', { lossMode: 'clip_cov', clipCovRatio: 0.2, clipCovLb: -5, clipCovUb: 5 }],
  ] as [string, Partial<PpoConfig>][])('%s: the samples view’s picked tokens read off the trace are the ones the trainer marked', async (_name, over) => {
    // runCapturedIterations checks traceBatch's rows against the posted ones, picks included.
    const traces = await runCapturedIterations(be, { advantageEstimator: 'group_norm', ...over }, F64);
    const picked = traces.flatMap((trace) => traceBatch({ trace, prompts: [], tokenText: [] }).samples!.rows.flatMap((r) => r.tokens.filter((t) => t.covPicked)));
    expect(picked.length).toBeGreaterThan(0);
  });

  it('a captured iteration trains exactly as an uncaptured one; without capture there is no trace', async () => {
    const run = async (capture: boolean) => {
      const t = await PpoTrainer.create({ be, config: tinyConfig({ seed: 4, ppoEpochs: 2 }), actorCheckpoint: await tinyCheckpoint('stop') });
      const results = [await t.iteration({ capture }), await t.iteration({ capture })];
      const w = await t.readWeights();
      const reads = be.counters().readbacks;
      t.dispose();
      return { results, w, reads };
    };
    const before = be.counters().readbacks;
    const plain = await run(false);
    const plainReads = plain.reads - before;
    const mid = be.counters().readbacks;
    const captured = await run(true);
    expect(captured.reads - mid).toBe(plainReads);
    expect(plain.results.every((r) => r.trace === undefined)).toBe(true);
    expect(captured.results.every((r) => r.trace !== undefined)).toBe(true);
    expect(Array.from(captured.w.actor)).toEqual(Array.from(plain.w.actor));
    expect(Array.from(captured.w.critic!)).toEqual(Array.from(plain.w.critic!));
    const strip = (m: Record<string, number>) => Object.fromEntries(Object.entries(m).filter(([k]) => !k.startsWith('time_') && !k.endsWith('_seconds') && !k.startsWith('gpu_')));
    expect(captured.results.map((r) => strip(r.metrics))).toEqual(plain.results.map((r) => strip(r.metrics)));
  });

  it('a late capture (a pause) reads nothing unless asked; asked after the final readback, it reads once more', async () => {
    const config = tinyConfig({ seed: 5, ppoEpochs: 2, miniBatches: 2, valueClip: 0.2 });
    // Answers of lateCapture, in order: before the final readback, then after it.
    const run = async (answers: boolean[]) => {
      const t = await PpoTrainer.create({ be, config, actorCheckpoint: await tinyCheckpoint('stop') });
      await t.iteration();
      let asked = 0;
      const before = be.counters().readbacks;
      const res = await t.iteration({ lateCapture: () => answers[asked++] ?? false });
      const reads = be.counters().readbacks - before;
      const w = await t.readWeights();
      t.dispose();
      return { res, reads, asked, w };
    };
    const never = await run([false, false]);
    const early = await run([true]);
    const late = await run([false, true]);
    expect(never.res.trace).toBeUndefined();
    expect([never.asked, early.asked, late.asked]).toEqual([2, 1, 2]);
    expect(early.reads).toBe(never.reads);
    expect(late.reads).toBe(never.reads + 1);
    for (const r of [early, late]) {
      expectTraceMatches(r.res, config, F64, `asked ${r.asked}×`);
      expect(Array.from(r.w.actor)).toEqual(Array.from(never.w.actor));
      expect(Array.from(r.w.critic!)).toEqual(Array.from(never.w.critic!));
    }
    // Read before or after the readback, it is the same trace.
    expect(late.res.trace).toEqual(early.res.trace);
  });
});
