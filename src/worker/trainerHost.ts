// The trainer worker's logic as a plain class, so Node tests drive it without a Worker: it takes
// protocol messages (page → worker) and posts protocol messages back. Everything that touches the
// environment (backend, files, the trainer itself, yielding to the event loop) is injected.
//
// Concurrency: commands that touch the trainer run one at a time through a promise chain; the
// training loop enqueues one iteration at a time and yields to the event loop between them, so
// `pause`, `step`, `snapshot` and `setConfig` are handled between iterations. `pause` only clears a
// flag and takes effect at the next iteration boundary.
//
// Safety: before each iteration the trainer's state is saved (on the device when the trainer
// offers saveState/restoreState, else the actor checkpoint on the host); a non-finite loss or
// grad-norm metric restores it and pauses with a message naming the metric and the stage. A lost
// device stops training and keeps the last host copy of the actor weights for `snapshot`.
import type { Backend } from '../backend/backend.ts';
import { parseCheckpoint } from '../model/checkpoint.ts';
import { DEFAULT_CONFIG, validateConfig, type PpoConfig } from '../rl/config.ts';
import { RewardModel } from '../rl/rewardModel/rewardModel.ts';
import { RESTART_FIELDS, type IterationResult, type Stage, type TrainerInit } from '../rl/trainer.ts';
import { getTask } from '../tasks/index.ts';
import type { BackendChoice, CheckpointRole, LabelledPair, PageToWorker, TrainerStage, WorkerToPage } from './protocol.ts';

/** What the host needs of a PPO trainer (PpoTrainer satisfies it). */
export interface TrainerLike {
  readonly iter: number;
  iteration(): Promise<IterationResult>;
  actorCheckpoint(): Promise<Uint8Array>;
  setConfig(c: PpoConfig): void;
  dispose(): void;
  /** Optional cheap device-side copy of every weight and optimiser state. */
  saveState?(): Promise<unknown> | unknown;
  restoreState?(state: unknown): Promise<void> | void;
}

export interface HostDeps {
  post(msg: WorkerToPage, transfer?: Transferable[]): void;
  /** A backend for the choice; `onLost` is called if its device goes away later. */
  makeBackend(choice: BackendChoice, onLost: (reason: string) => void): Promise<{ be: Backend; adapter: string }>;
  /** Bytes of a shipped checkpoint by file stem, e.g. "sentiment" or "sentiment_rm". */
  fetchCheckpoint(stem: string): Promise<Uint8Array>;
  createTrainer(init: TrainerInit): Promise<TrainerLike>;
  /** Resolves on a later macrotask, letting queued messages in. */
  tick(): Promise<void>;
}

/** Config fields the trainer cannot take mid-run (plus the reward source): a change rebuilds it. */
const REBUILD_FIELDS: readonly (keyof PpoConfig)[] = [...RESTART_FIELDS, 'rewardSource'];

/** Metrics that, if not finite, mean the update blew up (loss or gradient norm). */
export function badMetric(metrics: Record<string, number>): string | null {
  for (const [name, v] of Object.entries(metrics)) {
    if ((name.includes('loss') || name.includes('grad_norm')) && !Number.isFinite(v)) return `${name} = ${v}`;
  }
  return null;
}

/** File stem of the reward model shipped for a task. */
export const rewardModelStem = (task: string) => `${task}_rm`;

export class TrainerHost {
  private be: Backend | null = null;
  private config: PpoConfig = { ...DEFAULT_CONFIG };
  private trainer: TrainerLike | null = null;
  private rewardModel: RewardModel | null = null;
  /** Checkpoints the page loaded (override the shipped ones). */
  private loaded: { actor?: Uint8Array; reward?: Uint8Array } = {};
  /** Last actor weights known good, on the host (what `snapshot` returns after a device loss). */
  private lastGoodActor: Uint8Array | null = null;
  /** Set when a trainer had to be rebuilt after a failure: it resumes from these actor weights. */
  private resumeActor: Uint8Array | null = null;
  private stage: TrainerStage = 'idle';
  private running = false;
  private looping = false;
  private lost: string | null = null;
  private chain: Promise<void> = Promise.resolve();

  constructor(private readonly deps: HostDeps) {}

  /** Entry point for every page → worker message; resolves when the command has been handled. */
  handle(msg: PageToWorker): Promise<void> {
    switch (msg.type) {
      case 'init':
        return this.enqueue(() => this.init(msg.backend));
      case 'pause':
        // Not queued: it must take effect while an iteration is in flight.
        if (this.running) {
          this.running = false;
          this.deps.post({ type: 'paused', reason: 'paused by the user', stage: this.stage });
        }
        return Promise.resolve();
      case 'start':
        if (!this.running) {
          this.running = true;
          void this.loop();
        }
        return Promise.resolve();
      case 'step':
        this.running = false;
        return this.enqueue(() => this.iterate());
      case 'setConfig':
        return this.enqueue(() => this.setConfig(msg.config));
      case 'loadCheckpoint':
        return this.enqueue(() => this.loadCheckpoint(msg.role, new Uint8Array(msg.bytes)));
      case 'reset':
        this.running = false;
        return this.enqueue(() => this.reset());
      case 'snapshot':
        return this.enqueue(() => this.snapshot());
      case 'trainRewardModel':
        return this.enqueue(() => this.trainRewardModel(msg.pairs));
      default: {
        const t = (msg as { type?: unknown }).type;
        this.deps.post({ type: 'error', message: `unknown message type ${JSON.stringify(t)}` });
        return Promise.resolve();
      }
    }
  }

  /** Whether the loop is (still) meant to run; for tests and the worker. */
  get isRunning(): boolean {
    return this.running;
  }

  get currentConfig(): PpoConfig {
    return this.config;
  }

  private enqueue(op: () => Promise<void>): Promise<void> {
    const next = this.chain.then(async () => {
      try {
        await op();
      } catch (e) {
        this.running = false;
        this.deps.post({ type: 'error', message: e instanceof Error ? e.message : String(e), stage: this.stage === 'idle' ? undefined : this.stage });
        this.setStage('idle');
      }
    });
    this.chain = next;
    return next;
  }

  private async loop(): Promise<void> {
    if (this.looping) return;
    this.looping = true;
    try {
      while (this.running) {
        await this.enqueue(() => this.iterate());
        await this.deps.tick();
      }
    } finally {
      this.looping = false;
    }
  }

  private async init(choice: BackendChoice): Promise<void> {
    if (this.be) {
      this.disposeTrainer();
      this.be = null;
    }
    this.lost = null;
    const { be, adapter } = await this.deps.makeBackend(choice, (reason) => this.onDeviceLost(reason));
    this.be = be;
    this.deps.post({ type: 'ready', adapter, backendLabel: be.label });
  }

  private onDeviceLost(reason: string): void {
    this.lost = reason || 'unknown reason';
    this.running = false;
    const kept = this.lastGoodActor ? ' The last good actor weights are kept (Snapshot / export still works).' : '';
    this.deps.post({ type: 'error', message: `the GPU device was lost (${this.lost}); training stopped.${kept} Reload the page to continue.`, stage: this.stage === 'idle' ? undefined : this.stage });
  }

  private async setConfig(config: PpoConfig): Promise<void> {
    const problems = validateConfig(config as PpoConfig & Record<string, unknown>);
    if (problems.length > 0) {
      throw new Error(`config not applied: ${problems.map((p) => p.message).join('; ')}`);
    }
    const prev = this.config;
    this.config = { ...config };
    if (prev.task !== config.task) {
      // Loaded checkpoints and the reward model belong to the previous task's tokenizer.
      this.loaded = {};
      this.resumeActor = null;
      this.rewardModel?.dispose();
      this.rewardModel = null;
    }
    if (!this.trainer) return;
    if (REBUILD_FIELDS.some((f) => prev[f] !== config[f])) {
      this.running = false;
      this.disposeTrainer();
    } else {
      this.trainer.setConfig(this.config);
    }
  }

  private async loadCheckpoint(role: CheckpointRole, bytes: Uint8Array): Promise<void> {
    if (role !== 'actor' && role !== 'reward') {
      throw new Error(`loading a ${role} checkpoint is not supported: the critic and the reference policy start from the actor (SFT) checkpoint`);
    }
    const ck = parseCheckpoint(bytes); // throws a precise message on a malformed file
    const task = getTask(this.config.task);
    if (ck.alphabet !== task.alphabet) throw new Error(`the ${role} checkpoint's alphabet does not match task "${task.name}"`);
    const wantHead = role === 'actor' ? 'lm' : 'reward';
    if (ck.config.head !== wantHead) throw new Error(`an ${role} checkpoint needs the '${wantHead}' head, this one has '${ck.config.head}'`);
    this.loaded[role] = bytes;
    if (role === 'actor') this.resumeActor = null;
    if (role === 'reward') {
      this.rewardModel?.dispose();
      this.rewardModel = null;
    }
    // The next start/step builds a trainer from the loaded weights.
    this.running = false;
    this.disposeTrainer();
  }

  private async reset(): Promise<void> {
    this.disposeTrainer();
    this.resumeActor = null;
    this.setStage('idle');
  }

  private async snapshot(): Promise<void> {
    let bytes: Uint8Array | null = null;
    if (this.trainer && !this.lost) bytes = await this.trainer.actorCheckpoint();
    else bytes = this.lastGoodActor ?? this.loaded.actor ?? null;
    if (!bytes) throw new Error('no actor weights yet: press Start or Step first');
    const buf = bytes.slice().buffer as ArrayBuffer; // an own copy, transferred to the page
    this.deps.post({ type: 'snapshot', bytes: buf }, [buf]);
  }

  /** The task's reward model: the one the page loaded, else the shipped one (built once). */
  private async ensureRewardModel(): Promise<RewardModel> {
    if (this.rewardModel) return this.rewardModel;
    const be = this.requireBackend();
    const task = getTask(this.config.task);
    if (!task.preferencePair && !this.loaded.reward) throw new Error(`task "${task.name}" has no learned reward model (use the rule reward)`);
    const bytes = this.loaded.reward ?? (await this.fetchNamed(rewardModelStem(task.name), `the reward model of task "${task.name}"`));
    this.rewardModel = RewardModel.fromCheckpoint(be, bytes, { alphabet: task.alphabet, task: task.name });
    return this.rewardModel;
  }

  /**
   * Human feedback: fine-tunes the reward model on the page's labelled pairs. A running trainer
   * holds the same RewardModel object, so its next rollouts are scored by the updated weights.
   */
  private async trainRewardModel(pairs: LabelledPair[]): Promise<void> {
    const rm = await this.ensureRewardModel();
    const r = await rm.trainOnLabels(pairs);
    this.deps.post({ type: 'rewardModelTrained', pairs: pairs.length, accuracy: r.after.accuracy, accuracyBefore: r.before.accuracy });
  }

  private async ensureTrainer(): Promise<TrainerLike> {
    if (this.trainer) return this.trainer;
    const be = this.requireBackend();
    const task = getTask(this.config.task);
    const actor = this.resumeActor ?? this.loaded.actor ?? (await this.fetchNamed(task.name, `the SFT checkpoint of task "${task.name}"`));
    const rewardModel = this.config.rewardSource === 'model' ? await this.ensureRewardModel() : undefined;
    this.trainer = await this.deps.createTrainer({
      be,
      config: this.config,
      actorCheckpoint: actor,
      rewardModel,
      onStage: (s: Stage) => this.setStage(s),
    });
    this.lastGoodActor = actor;
    return this.trainer;
  }

  private async fetchNamed(stem: string, what: string): Promise<Uint8Array> {
    try {
      return await this.deps.fetchCheckpoint(stem);
    } catch (e) {
      throw new Error(`could not load ${what} (checkpoints/${stem}.safetensors): ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  private requireBackend(): Backend {
    if (this.lost) throw new Error(`the GPU device was lost (${this.lost}); reload the page to continue`);
    if (!this.be) throw new Error('the trainer is not initialised yet (no init message)');
    return this.be;
  }

  /** One PPO iteration with the NaN guard; posts stage, metrics, samples and ratios. */
  private async iterate(): Promise<void> {
    this.requireBackend();
    const trainer = await this.ensureTrainer();
    const saved = trainer.saveState ? await trainer.saveState() : null;
    if (!trainer.saveState) this.lastGoodActor = await trainer.actorCheckpoint();
    let result: IterationResult;
    try {
      result = await trainer.iteration();
    } catch (e) {
      if (this.lost) return; // already reported by onDeviceLost
      await this.restore(trainer, saved);
      throw e;
    }
    if (this.lost) return;
    const bad = badMetric(result.metrics);
    if (bad) {
      const stage = this.stage === 'idle' ? 'update' : this.stage;
      await this.restore(trainer, saved);
      this.running = false;
      this.deps.post({
        type: 'paused',
        reason: `non-finite ${bad} in iteration ${result.iter}; the weights from before that iteration were restored`,
        stage,
      });
      this.setStage('idle');
      return;
    }
    this.setStage('idle');
    const { post } = this.deps;
    post({ type: 'metrics', iter: result.iter, values: result.metrics });
    post({ type: 'samples', iter: result.iter, rows: result.samples });
    post({ type: 'ratios', iter: result.iter, ratios: result.ratios.ratios, advantages: result.ratios.advantages });
  }

  /** Back to the state saved before the failed iteration (device copy, else host actor bytes). */
  private async restore(trainer: TrainerLike, saved: unknown): Promise<void> {
    if (trainer.restoreState && saved !== null) {
      await trainer.restoreState(saved);
      return;
    }
    // No device-side state: rebuild from the last good actor weights. The critic and the
    // reference restart from them too, which the message to the page cannot hide, so say so.
    this.disposeTrainer();
    this.resumeActor = this.lastGoodActor;
    this.deps.post({ type: 'error', message: 'the trainer cannot restore its full state; it restarts from the last good actor weights (critic and reference re-initialised from them)' });
  }

  private setStage(s: TrainerStage): void {
    if (this.stage === s) return;
    this.stage = s;
    this.deps.post({ type: 'stage', stage: s });
  }

  private disposeTrainer(): void {
    this.trainer?.dispose();
    this.trainer = null;
  }
}
