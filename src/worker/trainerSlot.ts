// The current trainer: built on demand from the current config on the session's backend (the SFT
// checkpoint from the cache, the learned reward model when the config asks for it), and the host's
// copies of its state: the actor bytes it was built from, the last actor weights known good (what
// an export returns once the device is gone), and the last full state saved or loaded (what a
// trainer rebuilt after a device loss starts from).
import { parseCheckpoint } from '../model/checkpoint.ts';
import { precompileShape } from '../ops/decodeStep.ts';
import type { PpoConfig } from '../rl/config.ts';
import { loadRewardSandbox } from '../rl/rewardFunction/sandbox.ts';
import { decodeShapeOf, type Stage } from '../rl/trainer.ts';
import { getTask } from '../tasks/index.ts';
import type { CheckpointCache } from './checkpointCache.ts';
import type { DeviceSession } from './deviceSession.ts';
import type { HostDeps, TrainerLike } from './hostDeps.ts';
import type { RewardModelSlot } from './rewardModelSlot.ts';

/** Before an iteration the actor is also copied to the host once every this many iterations. */
const HOST_COPY_EVERY = 10;

export interface TrainerSources {
  createTrainer: HostDeps['createTrainer'];
  session: DeviceSession;
  checkpoints: CheckpointCache;
  rewardModel: RewardModelSlot;
  config(): PpoConfig;
  onStage(s: Stage): void;
}

export class TrainerSlot {
  private trainer: TrainerLike | null = null;
  /** The actor bytes the current trainer was built from: its weights until it iterates. */
  private source: Uint8Array | null = null;
  private goodActor: Uint8Array | null = null;
  private saved: { iter: number; bytes: Uint8Array } | null = null;

  constructor(private readonly from: TrainerSources) {}

  get current(): TrainerLike | null {
    return this.trainer;
  }

  /** The current trainer, built when there is none (after the pipelines compiling in the background). */
  async ensure(): Promise<TrainerLike> {
    if (this.trainer) return this.trainer;
    const { session, checkpoints, rewardModel, onStage } = this.from;
    const config = this.from.config();
    const be = session.requireBackend();
    const task = getTask(config.task);
    const actorCheckpoint = await checkpoints.actor(task.name);
    const scorer = config.rewardSource === 'model' ? await rewardModel.get(be, task.name) : undefined;
    const rewardSandbox = config.rewardSource === 'function' ? await loadRewardSandbox() : undefined;
    await session.compiled;
    this.trainer = await this.from.createTrainer({ be, config, actorCheckpoint, rewardModel: scorer, rewardSandbox, onStage });
    this.source = actorCheckpoint;
    this.goodActor = actorCheckpoint;
    return this.trainer;
  }

  /**
   * Starts building the decode kernels for the next trainer's model shape beside the fixed kernels,
   * not after them: the trainer waits for the same pipeline when it is made, so Start right after
   * "ready" does not compile it alone. Called when a config arrives, not at connect, where the
   * config may still be the default the page is about to replace (a wasted build cost the first
   * point ~1.5 s). Idempotent per shape; a failure shows where the pipeline is used.
   */
  precompileNext(): void {
    const be = this.from.session.backend;
    if (!be) return;
    const config = this.from.config();
    void Promise.resolve()
      .then(async () => {
        // The model's sizes are the SFT checkpoint's, not the config's. Only a checkpoint already
        // here or on the way: this never starts a fetch.
        const actor = await this.from.checkpoints.actorIfAny(getTask(config.task).name);
        if (actor) await precompileShape(be, decodeShapeOf(config, parseCheckpoint(actor).config));
      })
      .catch(() => undefined);
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
