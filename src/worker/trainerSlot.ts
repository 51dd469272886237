// The current trainer and the host's copies of its state: the actor bytes it was built from, the
// last actor weights known good (what an export returns once the device is gone), and the last
// full state saved or loaded (what a trainer rebuilt after a device loss starts from).
import type { TrainerInit } from '../rl/trainer.ts';
import type { HostDeps, TrainerLike } from './hostDeps.ts';

/** Before an iteration the actor is also copied to the host once every this many iterations. */
const HOST_COPY_EVERY = 10;

export class TrainerSlot {
  private trainer: TrainerLike | null = null;
  /** The actor bytes the current trainer was built from: its weights until it iterates. */
  private source: Uint8Array | null = null;
  private goodActor: Uint8Array | null = null;
  private saved: { iter: number; bytes: Uint8Array } | null = null;

  constructor(private readonly createTrainer: HostDeps['createTrainer']) {}

  get current(): TrainerLike | null {
    return this.trainer;
  }

  async build(init: TrainerInit): Promise<TrainerLike> {
    this.trainer = await this.createTrainer(init);
    this.source = init.actorCheckpoint;
    this.goodActor = init.actorCheckpoint;
    return this.trainer;
  }

  dispose(): void {
    this.trainer?.dispose();
    this.trainer = null;
    this.source = null;
  }

  /** After a device loss: the trainer's buffers went with the device. Whether there was one. */
  drop(): boolean {
    const had = this.trainer !== null;
    try {
      this.trainer?.dispose();
    } catch {
      // Nothing left to free.
    }
    this.trainer = null;
    this.source = null;
    return had;
  }

  /**
   * The state to put back if the next iteration goes non-finite: a device copy (no readback). The
   * actor goes to the host too every HOST_COPY_EVERY iterations, for a device that goes away.
   */
  async guardNextIteration(trainer: TrainerLike): Promise<unknown> {
    if (trainer.iter % HOST_COPY_EVERY === 0) this.goodActor = trainer.iter === 0 && this.source ? this.source : await trainer.actorCheckpoint();
    return trainer.deviceSnapshot();
  }

  /** The actor's weights for an export: the live trainer's when its device is usable, else the last good copy. */
  async actorBytes(deviceUsable: boolean): Promise<Uint8Array | null> {
    const t = this.trainer;
    if (!t || !deviceUsable) return this.goodActor;
    // A trainer that has not iterated holds exactly the weights it was built from: that file as it came.
    if (t.iter === 0 && this.source) return this.source;
    return t.actorCheckpoint();
  }

  /** The trainer's full state, kept as what a lost device rebuilds from. */
  async save(trainer: TrainerLike): Promise<{ iter: number; bytes: Uint8Array }> {
    this.saved = { iter: trainer.iter, bytes: await trainer.saveState() };
    return this.saved;
  }

  /** Puts a full state into the trainer, kept as what a lost device rebuilds from. */
  async load(trainer: TrainerLike, bytes: Uint8Array, iter: number): Promise<void> {
    await trainer.restoreState(bytes);
    this.source = null;
    this.saved = { iter, bytes };
  }

  /** After a device loss, on the rebuilt trainer: the last full state if one was kept; the iteration it resumes from. */
  async restoreSaved(trainer: TrainerLike): Promise<number> {
    if (!this.saved) return trainer.iter;
    await trainer.restoreState(this.saved.bytes);
    this.source = null;
    return this.saved.iter;
  }

  get savedIter(): number | null {
    return this.saved?.iter ?? null;
  }

  /** The kept state no longer describes the run (new weights, a reset, settings that rebuild). */
  forgetSaved(): void {
    this.saved = null;
  }

  /** The page loaded another actor: the weights an earlier trainer started from are not its own. */
  forgetGoodActor(): void {
    this.goodActor = null;
  }
}
