// RolloutSource: a rollout sampled ahead is used by its own iteration only, and its device
// tensors are freed whenever it is dropped or never kept.
import { describe, expect, it } from 'vitest';
import { CpuBackend } from '../../src/backend/cpu/cpuBackend.ts';
import type { Tensor } from '../../src/backend/tensor.ts';
import type { RecordedRollout, RolloutBatch } from '../../src/rl/rollout.ts';
import { RolloutSource } from '../../src/rl/rolloutSource.ts';

function fixture() {
  const be = new CpuBackend();
  const disposed = new Set<Tensor>();
  be.dispose = (...ts) => {
    for (const t of ts) if (t) disposed.add(t);
  };
  const recorded: { iter: number; round: number; sequences: Tensor }[] = [];
  const record = (iter: number, round: number): RecordedRollout => {
    const t = (v: number) => be.tensor([v], [1]);
    const device = { sequences: t(iter), attnMask: t(1), positions: t(0), actionMask: t(1), logprobs: t(-1) };
    recorded.push({ iter, round, sequences: device.sequences });
    const batch = { B: 1, P: 1, A: 0, prompts: [`p${iter}`] } as unknown as RolloutBatch;
    return { tensors: [device.sequences], finish: () => ({ batch, device }), dispose: () => be.dispose(...Object.values(device)) };
  };
  return { be, disposed, recorded, source: new RolloutSource(be, record) };
}

describe('RolloutSource', () => {
  it('hands the rollout kept ahead to its own iteration, and samples any other', async () => {
    const { recorded, source } = fixture();
    source.recordNext(1);
    source.keepNext(1, [[1]], 0.5);
    expect(source.has(1)).toBe(true);
    const one = await source.take(1);
    expect(one.aheadSeconds).toBe(0.5);
    expect(one.rollout.batch.prompts).toEqual(['p1']);
    expect(recorded).toHaveLength(1);
    const two = await source.take(2);
    expect(two.aheadSeconds).toBeNull();
    expect(recorded.map((r) => r.iter)).toEqual([1, 2]);
  });

  it('frees the device tensors of a rollout it drops or never keeps', async () => {
    const { disposed, recorded, source } = fixture();
    source.recordNext(1);
    source.discardRecorded(); // the iteration that recorded it failed
    expect(disposed.has(recorded[0].sequences)).toBe(true);
    expect(source.has(1)).toBe(false);

    source.recordNext(1);
    source.keepNext(1, [[1]], 0);
    source.drop(); // e.g. setConfig
    expect(disposed.has(recorded[1].sequences)).toBe(true);
    expect(source.has(1)).toBe(false);

    await source.sampleAhead(2, () => false); // the trainer moved meanwhile
    expect(disposed.has(recorded[2].sequences)).toBe(true);
    expect(source.has(2)).toBe(false);

    // A given rollout replaces the one ahead, which is freed.
    await source.sampleAhead(2, () => true);
    const given = { B: 1, P: 1, A: 0, prompts: ['given'] } as unknown as RolloutBatch;
    const taken = await source.take(2, given);
    expect(taken.rollout).toEqual({ batch: given, device: null });
    expect(disposed.has(recorded[3].sequences)).toBe(true);
  });
});
