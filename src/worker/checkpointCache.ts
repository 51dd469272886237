// The checkpoints trainers and reward models are built from: the shipped files, fetched once per
// file stem (the current task's is asked for as soon as the page sends its config, so it arrives
// while the kernels compile), and the ones the page loaded, which take their place. The page's
// actors (SFT in the tab, or a file) are kept per task, since each task has its own alphabet; the
// page's reward model belongs to the current task only. A failed fetch is forgotten, so the next
// use tries again and reports its own error.
import { parseCheckpoint } from '../model/checkpoint.ts';
import type { PpoConfig } from '../rl/config.ts';
import { getTask } from '../tasks/index.ts';
import type { CheckpointRole } from './protocol.ts';

/** File stem of the reward model shipped for a task. */
export const rewardModelStem = (task: string) => `${task}_rm`;

export class CheckpointCache {
  private fetched = new Map<string, Promise<Uint8Array>>();
  private actors = new Map<string, Uint8Array>();
  private reward: Uint8Array | undefined;

  constructor(private readonly fetchCheckpoint: (stem: string) => Promise<Uint8Array>) {}

  /** Starts fetching what a trainer for `config` will need and the page has not loaded. */
  prefetchFor(config: PpoConfig): void {
    if (!this.actors.has(config.task)) void this.prefetch(config.task).catch(() => {});
    if (config.rewardSource === 'model' && !this.reward) void this.prefetch(rewardModelStem(config.task)).catch(() => {});
  }

  /** The SFT actor for `task`: the page's, else the shipped one. */
  actor(task: string): Promise<Uint8Array> {
    const mine = this.actors.get(task);
    return mine ? Promise.resolve(mine) : this.fetchNamed(task, `the SFT checkpoint of task "${task}"`);
  }

  /** The actor bytes already here or on the way; this never starts a fetch. */
  actorIfAny(task: string): Promise<Uint8Array> | undefined {
    const mine = this.actors.get(task);
    return mine ? Promise.resolve(mine) : this.fetched.get(task);
  }

  /** The actor the page loaded or trained for `task`, if it did. */
  loadedActor(task: string): Uint8Array | undefined {
    return this.actors.get(task);
  }

  /** Whether the page loaded a reward model (a task without a shipped one can use it). */
  get hasLoadedReward(): boolean {
    return this.reward !== undefined;
  }

  /** The reward model for `task`: the page's (or its fine-tuned copy), else the shipped one. */
  rewardModel(task: string): Promise<Uint8Array> {
    return this.reward ? Promise.resolve(this.reward) : this.fetchNamed(rewardModelStem(task), `the reward model of task "${task}"`);
  }

  /** A host copy of fine-tuned reward-model weights: what a rebuild after a device loss starts from. */
  keepReward(bytes: Uint8Array): void {
    this.reward = bytes;
  }

  /** Takes a checkpoint the page loaded for `task`, after checking its file, alphabet and head. */
  load(role: CheckpointRole, bytes: Uint8Array, taskName: string): void {
    if (role !== 'actor' && role !== 'reward') {
      throw new Error(`loading a ${role} checkpoint is not supported: the critic and the reference policy start from the actor (SFT) checkpoint`);
    }
    const ck = parseCheckpoint(bytes); // throws a precise message on a malformed file
    const task = getTask(taskName);
    if (ck.alphabet !== task.alphabet) throw new Error(`the ${role} checkpoint's alphabet does not match task "${task.name}"`);
    const wantHead = role === 'actor' ? 'lm' : 'reward';
    if (ck.config.head !== wantHead) throw new Error(`an ${role} checkpoint needs the '${wantHead}' head, this one has '${ck.config.head}'`);
    if (role === 'actor') this.actors.set(task.name, bytes);
    else this.reward = bytes;
  }

  /** Forgets the actor the page loaded or trained for `task`: the shipped one is its actor again. */
  forgetActor(task: string): void {
    this.actors.delete(task);
  }

  /** Forgets the page's reward model: it belongs to another task's tokenizer (actors are kept per task). */
  forgetLoadedReward(): void {
    this.reward = undefined;
  }

  /** Starts fetching a shipped checkpoint (once per stem); the promise never rejects unhandled. */
  private prefetch(stem: string): Promise<Uint8Array> {
    let p = this.fetched.get(stem);
    if (!p) {
      p = this.fetchCheckpoint(stem);
      this.fetched.set(stem, p);
      p.catch(() => {
        if (this.fetched.get(stem) === p) this.fetched.delete(stem);
      });
    }
    return p;
  }

  private async fetchNamed(stem: string, what: string): Promise<Uint8Array> {
    try {
      return await this.prefetch(stem);
    } catch (e) {
      throw new Error(`could not load ${what} (checkpoints/${stem}.safetensors): ${e instanceof Error ? e.message : String(e)}`);
    }
  }
}
