// Where an iteration's rollout comes from. After the first iteration it was sampled ahead: recorded
// after the previous update, from the updated actor exactly as this iteration would sample it, and
// read back with that iteration's statistics, so an iteration waits on the device once. A rollout
// ahead is dropped (its device tensors freed) whenever the weights or the settings change outside
// an iteration: setConfig, restoreState, restoreDeviceSnapshot, a failed iteration.
import type { Backend } from '../backend/backend.ts';
import type { Tensor } from '../backend/tensor.ts';
import { disposeRolloutTensors, type RecordedRollout, type RolloutBatch, type SampledRollout } from './rollout.ts';

/** Records iteration `iter`'s rollout (DAPO round `round`) from the current actor. */
export type RecordRollout = (iter: number, round: number) => RecordedRollout;

export class RolloutSource {
  /** The rollout of iteration `iter`; `seconds` is the time recording it took (on the CPU backend, its computation). */
  private ahead: { iter: number; rollout: SampledRollout; seconds: number } | null = null;
  /** Recorded during the iteration now running, kept only once that iteration succeeds. */
  private recorded: RecordedRollout | null = null;

  constructor(
    private readonly be: Backend,
    private readonly record: RecordRollout,
  ) {}

  /**
   * Iteration `iter`'s rollout: `given` (tests feed two trainers the same sequences), else the one
   * sampled ahead for it, else one sampled now. `aheadSeconds` is null when it was not ahead.
   */
  async take(iter: number, given?: RolloutBatch): Promise<{ rollout: SampledRollout; aheadSeconds: number | null }> {
    const ahead = this.ahead?.iter === iter && !given ? this.ahead : null;
    if (ahead) this.ahead = null;
    else this.drop();
    if (given) return { rollout: { batch: given, device: null }, aheadSeconds: null };
    if (ahead) return { rollout: ahead.rollout, aheadSeconds: ahead.seconds };
    return { rollout: await this.sample(iter, 0), aheadSeconds: null };
  }

  /** Records and reads one rollout now (one readback). */
  async sample(iter: number, round: number): Promise<SampledRollout> {
    const rec = this.record(iter, round);
    try {
      return rec.finish(await this.be.readMany(rec.tensors));
    } catch (e) {
      rec.dispose();
      throw e;
    }
  }

  /** Whether iteration `iter`'s rollout is here already. */
  has(iter: number): boolean {
    return this.ahead?.iter === iter;
  }

  /** Samples iteration `iter`'s rollout now and keeps it, unless `stillValid()` says the trainer moved meanwhile. */
  async sampleAhead(iter: number, stillValid: () => boolean): Promise<void> {
    const t = performance.now();
    const rollout = await this.sample(iter, 0);
    if (stillValid()) {
      this.drop();
      this.ahead = { iter, rollout, seconds: (performance.now() - t) / 1000 };
    } else disposeRolloutTensors(this.be, rollout.device);
  }

  /** Records iteration `iter`'s rollout now; returns the tensors to read back with the iteration's statistics. */
  recordNext(iter: number): Tensor[] {
    this.discardRecorded();
    this.recorded = this.record(iter, 0);
    return this.recorded.tensors;
  }

  /** The recorded rollout's values are back and its iteration passed every check: it becomes iteration `iter`'s. */
  keepNext(iter: number, host: readonly ArrayLike<number>[], seconds: number): void {
    const rec = this.recorded!;
    this.recorded = null;
    this.drop();
    this.ahead = { iter, rollout: rec.finish(host), seconds };
  }

  /** After an iteration: a rollout it recorded but did not keep (it failed) is freed. */
  discardRecorded(): void {
    this.recorded?.dispose();
    this.recorded = null;
  }

  /** Forgets the rollout ahead: it was sampled from weights or settings that no longer hold. */
  drop(): void {
    if (this.ahead) disposeRolloutTensors(this.be, this.ahead.rollout.device);
    this.ahead = null;
  }

  dispose(): void {
    this.discardRecorded();
    this.drop();
  }
}
