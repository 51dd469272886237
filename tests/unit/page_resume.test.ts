// The page side of resume: naming what went wrong with a saved state (quota, version, corrupt,
// storage), the shape check of a stored record, and cutting a run's curve at the resumed iteration.
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../src/rl/config.ts';
import { checkResumePointShape, classifyStateProblem, STATE_SAVE_INTERVAL_MS } from '../../src/store/resume.ts';
import { metricsToJson } from '../../src/store/exportMetrics.ts';
import { describeRunBackend, switchRunBackend, truncateRunRecord, type RunRecord } from '../../src/store/runs.ts';

const run = (n: number, evals: number[]): RunRecord => ({
  id: 'r1',
  name: '#1',
  color: '#000',
  visible: true,
  config: DEFAULT_CONFIG,
  backend: 'webgpu',
  createdAt: 0,
  metrics: Array.from({ length: n }, (_, i) => ({ iter: i, values: { reward_mean: i } })),
  evals: evals.map((iter) => ({ iter, values: { accuracy: iter / 100 } })),
});

describe('resume: saved-state problems are named', () => {
  it('quota, version mismatch, corrupt file and other storage errors', () => {
    const quota = new Error('The quota has been exceeded.');
    quota.name = 'QuotaExceededError';
    expect(classifyStateProblem(quota)).toMatchObject({ kind: 'quota', label: 'storage quota exceeded' });
    expect(classifyStateProblem(new Error('trainer state: format_version 2 is not supported (expected 1)'))).toMatchObject({
      kind: 'version',
      label: 'saved by another version of the page',
    });
    expect(classifyStateProblem(new Error('safetensors: header length 1152921504606846976 runs past the end of the file'))).toMatchObject({ kind: 'corrupt' });
    expect(classifyStateProblem(new Error('trainer state: tensor "actor.adam_m" holds a non-finite value at 3'))).toMatchObject({
      kind: 'corrupt',
      label: 'corrupt trainer state',
    });
    const blocked = new Error('the database is held open by another tab');
    expect(classifyStateProblem(blocked)).toMatchObject({ kind: 'storage' });
    expect(classifyStateProblem('weird')).toMatchObject({ kind: 'storage', message: 'weird' });
  });

  it('a stored record must have a run id, a non-negative integer iteration and the bytes', () => {
    const bytes = new ArrayBuffer(8);
    expect(checkResumePointShape({ runId: 'r1', iter: 3, savedAt: 1, backend: 'cpu', wasRunning: true, bytes }).iter).toBe(3);
    expect(() => checkResumePointShape(null)).toThrow(/not an object/);
    expect(() => checkResumePointShape({ iter: 3, bytes })).toThrow(/runId missing/);
    expect(() => checkResumePointShape({ runId: 'r1', iter: -1, bytes })).toThrow(/iteration -1/);
    expect(() => checkResumePointShape({ runId: 'r1', iter: 2.5, bytes })).toThrow(/iteration 2\.5/);
    expect(() => checkResumePointShape({ runId: 'r1', iter: 2, bytes: 'x' })).toThrow(/bytes are missing/);
    // what the page reports for it
    expect(classifyStateProblem(new Error('trainer state record: the state bytes are missing')).kind).toBe('corrupt');
  });

  it('saves at most every 10 s', () => {
    expect(STATE_SAVE_INTERVAL_MS).toBe(10_000);
  });
});

describe('resume: the run record is cut at the resumed iteration', () => {
  it('keeps metrics before k and evaluations up to k; the same record goes on from there', () => {
    const r = run(9, [0, 5, 10]);
    const t = truncateRunRecord(r, 6);
    expect(t.id).toBe('r1');
    expect(t.metrics.map((m) => m.iter)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(t.evals!.map((e) => e.iter)).toEqual([0, 5]);
    // nothing to cut: the same object (no needless re-render or save)
    expect(truncateRunRecord(t, 6)).toBe(t);
    expect(truncateRunRecord(r, 20)).toBe(r);
  });
});

describe('resume on another backend: the run record says so from that iteration', () => {
  it('a WebGPU run continued on the CPU at 12 reads "WebGPU, CPU from iteration 12", in the record and the JSON export', () => {
    const r = switchRunBackend(run(12, [0, 10]), 'cpu', 12);
    expect(r.backend).toBe('cpu');
    expect(r.backends).toEqual([
      { fromIter: 0, backend: 'webgpu' },
      { fromIter: 12, backend: 'cpu' },
    ]);
    expect(describeRunBackend(r)).toBe('WebGPU, CPU from iteration 12');
    const doc = JSON.parse(metricsToJson([r]));
    expect(doc.runs[0].backend).toBe('cpu');
    expect(doc.runs[0].backends).toEqual(r.backends);
  });

  it('resuming on the same backend changes nothing; a later switch back is recorded; a resume before a switch drops it', () => {
    const same = run(5, []);
    expect(switchRunBackend(same, 'webgpu', 5)).toBe(same);
    expect(describeRunBackend(same)).toBe('WebGPU');
    const there = switchRunBackend(run(20, []), 'cpu', 12);
    const back = switchRunBackend(there, 'webgpu', 18);
    expect(back.backends?.map((b) => `${b.backend}@${b.fromIter}`)).toEqual(['webgpu@0', 'cpu@12', 'webgpu@18']);
    // Resumed from a state saved at 10 on WebGPU: iterations from 10 on are trained again there, so the CPU stretch is gone.
    const again = switchRunBackend(back, 'webgpu', 10);
    expect(again.backend).toBe('webgpu');
    expect(again.backends).toBeUndefined();
    // A run resumed from iteration 0 on the CPU trained wholly on the CPU.
    expect(switchRunBackend(run(3, []), 'cpu', 0)).toMatchObject({ backend: 'cpu', backends: undefined });
  });
});
