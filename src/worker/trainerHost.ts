// The trainer worker's logic as a plain class, so Node tests drive it without a Worker: it takes
// protocol messages (page → worker) and posts protocol messages back. Everything that touches the
// environment (backend, files, the trainer itself, yielding to the event loop) is injected.
//
// Concurrency: commands that touch the trainer run one at a time through a promise chain; the
// training loop enqueues one iteration at a time and yields to the event loop between them, so
// `pause`, `step`, `snapshot` and `setConfig` are handled between iterations. `pause` only clears a
// flag and takes effect at the next iteration boundary.
//
// Safety: before each iteration the trainer's whole state is saved — as device copies when the
// trainer offers deviceSnapshot (PpoTrainer: actor, critic, both AdamW moments, β, the counter; no
// readback), else its saveState, else the actor checkpoint on the host — and a non-finite loss or
// grad-norm metric restores it (the reference never moves) and pauses with a message naming the
// metric and the stage. A lost device stops training and keeps the last host copy of the actor
// weights for `snapshot`, refreshed every HOST_COPY_EVERY iterations rather than every iteration.
import type { Backend } from '../backend/backend.ts';
import { parseCheckpoint } from '../model/checkpoint.ts';
import { DEFAULT_CONFIG, validateConfig, type PpoConfig } from '../rl/config.ts';
import { RewardModel } from '../rl/rewardModel/rewardModel.ts';
import { RESTART_FIELDS, type IterationResult, type Stage, type TrainerInit } from '../rl/trainer.ts';
import { decodeTrainerState } from '../rl/trainerState.ts';
import { getTask } from '../tasks/index.ts';
import { evalDue, evalSize } from './evalSchedule.ts';
import type { BackendChoice, CheckpointRole, LabelledPair, PageToWorker, TrainerStage, WorkerToPage } from './protocol.ts';

/** What the host needs of a PPO trainer (PpoTrainer satisfies it). */
export interface TrainerLike {
  readonly iter: number;
  iteration(): Promise<IterationResult>;
  actorCheckpoint(): Promise<Uint8Array>;
  setConfig(c: PpoConfig): void;
  dispose(): void;
  /** Optional full state (PpoTrainer: one safetensors file) and its restore. */
  saveState?(): Promise<unknown> | unknown;
  restoreState?(state: unknown): Promise<void> | void;
  /** Held-out metrics (sampled, and greedy prefixed `greedy_`); without it no eval is posted. */
  evaluate?(count: number, samplesPerPrompt: number): Promise<Record<string, number>>;
  /** Optional cheap device-side copy of every weight and optimiser state, and its restore. */
  deviceSnapshot?(): unknown;
  restoreDeviceSnapshot?(snapshot: unknown): void;
}

/** With a device snapshot, the host copy of the actor (for a lost device) is refreshed this often. */
export const HOST_COPY_EVERY = 10;

type SavedState = { kind: 'device' | 'state'; value: unknown } | null;

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
  /** Iterations left of the last `start`'s `iterations` (null: train until paused). */
  private budgetLeft: number | null = null;
  /** Which trainer the held-out evaluations belong to, and the iteration count last evaluated. */
  private evaluated: { trainer: TrainerLike; iter: number } | null = null;

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
        this.budgetLeft = msg.iterations ?? null;
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
        return this.enqueue(() => this.reset()).then(() => this.deps.post({ type: 'resetDone' }));
      case 'snapshot':
        return this.enqueue(() => this.snapshot());
      case 'saveState':
        return this.enqueue(() => this.saveFullState());
      case 'loadState':
        this.running = false;
        return this.enqueue(() => this.loadFullState(new Uint8Array(msg.bytes)));
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
        if (this.stopAtBudget()) break;
        await this.enqueue(() => this.iterate());
        if (this.stopAtBudget()) break;
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
    await this.evaluateIfDue(trainer); // the SFT baseline, before the first iteration
    const saved = await this.saveBefore(trainer);
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
    post({ type: 'ratios', iter: result.iter, ratios: result.ratios.ratios, advantages: result.ratios.advantages, seqRatios: result.ratios.seqRatios, seqAdvantages: result.ratios.seqAdvantages });
    await this.afterIteration(trainer);
  }

  /**
   * Counts the iteration against the budget of the last `start`, then evaluates if due, and always
   * at the end of a budget (the point a preset's promise is measured at).
   */
  private async afterIteration(trainer: TrainerLike): Promise<void> {
    if (this.budgetLeft !== null) this.budgetLeft--;
    await this.evaluateIfDue(trainer, this.budgetLeft === 0 && this.running);
  }

  /**
   * Held-out evaluation of the trainer's current weights when `evalEvery` says so: after every
   * `evalEvery` completed iterations and at 0 (the SFT model), at most once per iteration count;
   * `atBudgetEnd` adds one at the end of a budget. evalEvery = 0 turns all of them off.
   */
  private async evaluateIfDue(trainer: TrainerLike, atBudgetEnd = false): Promise<void> {
    if (!trainer.evaluate || this.lost || this.config.evalEvery <= 0) return;
    const done = trainer.iter;
    if (!atBudgetEnd && !evalDue(done, this.config.evalEvery)) return;
    if (this.evaluated?.trainer === trainer && this.evaluated.iter === done) return;
    this.evaluated = { trainer, iter: done };
    const { count, samplesPerPrompt } = evalSize(this.config);
    const t0 = performance.now();
    const values = await trainer.evaluate(count, samplesPerPrompt);
    if (this.lost) return;
    this.deps.post({ type: 'eval', iter: done, values, prompts: count, seconds: (performance.now() - t0) / 1000 });
  }

  /** True (and the loop ends, telling the page) once the `iterations` of the last start are done. */
  private stopAtBudget(): boolean {
    if (this.budgetLeft === null || this.budgetLeft > 0 || !this.running) return false;
    this.running = false;
    this.budgetLeft = null;
    this.deps.post({ type: 'finished', iter: this.trainer?.iter ?? 0 });
    return true;
  }

  /** The trainer's full state as bytes for the page (resume after a reload). */
  private async saveFullState(): Promise<void> {
    const t = this.trainer;
    if (!t || this.lost) throw new Error('no trainer state yet: press Start or Step first');
    const bytes = t.saveState ? await t.saveState() : null;
    if (!(bytes instanceof Uint8Array)) throw new Error('this trainer cannot save its full state');
    const buf = bytes.slice().buffer as ArrayBuffer;
    this.deps.post({ type: 'state', iter: t.iter, bytes: buf }, [buf]);
  }

  /**
   * Resumes from a full state: the file is validated first (a bad one changes nothing), its config
   * applied, and the trainer (built or kept) takes every weight, moment, β and the counter from it.
   */
  private async loadFullState(bytes: Uint8Array): Promise<void> {
    const st = decodeTrainerState(bytes);
    await this.setConfig(st.config);
    const trainer = await this.ensureTrainer();
    if (!trainer.restoreState) throw new Error('this trainer cannot load a full state');
    await trainer.restoreState(bytes);
    this.deps.post({ type: 'stateLoaded', iter: st.iteration, config: st.config });
  }

  /** The state to fall back to if the next iteration fails (see the header). */
  private async saveBefore(trainer: TrainerLike): Promise<SavedState> {
    if (trainer.deviceSnapshot && trainer.restoreDeviceSnapshot) {
      if (trainer.iter % HOST_COPY_EVERY === 0) this.lastGoodActor = await trainer.actorCheckpoint();
      return { kind: 'device', value: trainer.deviceSnapshot() };
    }
    if (trainer.saveState && trainer.restoreState) return { kind: 'state', value: await trainer.saveState() };
    this.lastGoodActor = await trainer.actorCheckpoint();
    return null;
  }

  /** Back to the state saved before the failed iteration (device copy or full state, else host actor bytes). */
  private async restore(trainer: TrainerLike, saved: SavedState): Promise<void> {
    if (saved?.kind === 'device') {
      trainer.restoreDeviceSnapshot!(saved.value);
      return;
    }
    if (saved?.kind === 'state') {
      await trainer.restoreState!(saved.value);
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
