// The page's commands about models rather than runs: the actor's snapshot, checkpoints in, the
// reward model trained on the visitor's labels, SFT in the tab and its timing, and the SFT model
// each task trains from. A failed request is a notice (or, for SFT, its message inline).
import type { StoreApi } from 'zustand';
import type { ModelDims } from '../rl/sftRun.ts';
import type { CheckpointRole, LabelledPair } from '../worker/protocol.ts';
import type { AppState } from './appStore.ts';
import type { ConfigSync } from './configSync.ts';
import * as notices from './notices.ts';
import { REQUEST_TIMEOUT_MS, RequestDroppedError, RequestFailure, RequestTimeoutError, WorkerGoneError, type ReplyOf } from './requests.ts';
import type { TrainerConnection } from './trainerConnection.ts';

export class ModelCommands {
  constructor(
    private readonly store: StoreApi<AppState>,
    private readonly connection: TrainerConnection,
    private readonly config: ConfigSync,
  ) {}

  /** The actor as safetensors bytes, or null when there is no trainer or it failed (a notice says why). */
  async snapshot(): Promise<ArrayBuffer | null> {
    return this.reported(async () => (await this.connection.request('snapshot', {})).bytes);
  }

  /** Hands checkpoint bytes to the worker, which validates them before using them. */
  async loadCheckpoint(role: CheckpointRole, bytes: ArrayBuffer): Promise<boolean> {
    const sent = this.connection.send({ type: 'loadCheckpoint', role, bytes }, [bytes]);
    // The worker dropped the trainer it had prepared: prepare one from the loaded weights.
    if (sent) this.config.prepareAhead();
    return sent;
  }

  /** Fine-tunes the reward model on human labels; null when there is no trainer or it failed (a notice says why). */
  async trainRewardModel(pairs: LabelledPair[]): Promise<ReplyOf['trainRewardModel'] | null> {
    return this.reported(() => this.connection.request('trainRewardModel', { pairs }));
  }

  /**
   * SFT in the tab at `dims` (src/worker/sftStage.ts); the progress lands in the SFT store. The
   * reply, or the failure (its message), for the caller to show inline.
   */
  async trainSft(dims: ModelDims, phaseSteps?: number): Promise<ReplyOf['trainSft'] | { failed: string }> {
    // The worker builds the SFT model on the current config's task and seed.
    this.config.send(this.store.getState().config);
    try {
      return await this.connection.request('trainSft', { dims, ...(phaseSteps === undefined ? {} : { phaseSteps }) });
    } catch (e) {
      if (!(e instanceof RequestFailure)) throw e;
      return { failed: e.message };
    }
  }

  cancelSft(): void {
    this.connection.send({ type: 'cancelSft' });
  }

  /** Seconds per SFT step at `dims` on this device and the recipe's steps, or null when the worker could not tell (quietly: an estimate). */
  async timeSft(dims: ModelDims): Promise<ReplyOf['timeSft'] | null> {
    return (await this.connection.quietRequest('timeSft', { dims })?.catch(() => null)) ?? null;
  }

  /** The worker's actor for `task`: these bytes, or the shipped checkpoint (null). */
  setActor(task: string, bytes: ArrayBuffer | null): void {
    const sent = bytes ? this.connection.send({ type: 'loadCheckpoint', role: 'actor', bytes: bytes.slice(0), task }) : this.connection.send({ type: 'useShippedActor', task });
    if (sent) this.config.prepareAhead();
  }

  /** The kept actor for `task` to a worker already running (a new one gets it from workerSetup.ts). */
  setActorQuietly(task: string, bytes: ArrayBuffer): void {
    this.connection.quietSend({ type: 'loadCheckpoint', role: 'actor', bytes: bytes.slice(0), task });
  }

  /** A request's reply, or null with a notice for its failure where none is shown yet (a send failure and the worker's error have theirs). */
  private async reported<T>(ask: () => Promise<T>): Promise<T | null> {
    try {
      return await ask();
    } catch (e) {
      if (!(e instanceof RequestFailure)) throw e;
      const s = this.store.getState();
      if (e instanceof RequestTimeoutError) s.setNotice({ tone: 'error', text: notices.requestTimedOut(e.kind, REQUEST_TIMEOUT_MS[e.kind] / 1000) });
      else if (e instanceof WorkerGoneError || e instanceof RequestDroppedError) s.setNotice({ tone: 'error', text: notices.requestLost(e.kind, e.message) });
      return null;
    }
  }
}
