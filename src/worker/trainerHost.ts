// The trainer worker's logic as a plain class, so Node tests drive it without a Worker: it takes
// protocol messages (page → worker) and posts protocol messages back. Everything that touches the
// environment (backend, files, the trainer itself, yielding to the event loop) is injected.
//
// Concurrency: commands that touch the trainer run one at a time through a promise chain; the
// training loop enqueues one iteration at a time and yields to the event loop between them, so
// `pause`, `step`, `snapshot` and `setConfig` are handled between iterations. `pause` only clears a
// flag and takes effect at the next iteration boundary.
//
// NaN/Inf: before each iteration the trainer's whole state is saved — as device copies when the
// trainer offers deviceSnapshot (PpoTrainer: actor, critic, both AdamW moments, β, the counter; no
// readback), else its saveState, else the actor checkpoint on the host. A non-finite value (the
// trainer's NonFiniteError naming the stage it appeared in, or a non-finite metric) restores it
// (the reference never moves) and pauses with a report: iteration, stage, quantity and the knob
// most likely at fault (nanAdvice.ts). Nothing of that iteration is posted, so no chart changes.
//
// Device loss: the host keeps the last full state it produced (`saveState`, which the page asks
// for every few seconds and on Pause) or loaded. When device.lost fires it reports `deviceLost`,
// asks for a new WebGPU device, rebuilds the trainer from that state, reports `deviceRecovered`
// with the iterations it replays, and trains on if it was training. If no device comes back it
// reports `deviceUnavailable`; the page then offers the CPU backend with its saved copy of the state.
import type { Backend } from '../backend/backend.ts';
import { parseCheckpoint } from '../model/checkpoint.ts';
import { DEFAULT_CONFIG, validateConfig, type PpoConfig } from '../rl/config.ts';
import { RewardModel } from '../rl/rewardModel/rewardModel.ts';
import { decodeShapeOf, RESTART_FIELDS, type IterationOptions, type IterationResult, type Stage, type TrainerInit } from '../rl/trainer.ts';
import { NonFiniteError, stageOfMetric } from '../rl/nonFinite.ts';
import { decodeTrainerState } from '../rl/trainerState.ts';
import { getTask } from '../tasks/index.ts';
import { evalDue, evalSize } from './evalSchedule.ts';
import { nanAdvice } from './nanAdvice.ts';
import type { BackendChoice, CheckpointRole, LabelledPair, PageToWorker, TrainerStage, WorkerToPage } from './protocol.ts';

/** What the host needs of a PPO trainer (PpoTrainer satisfies it). */
export interface TrainerLike {
  readonly iter: number;
  iteration(opts?: IterationOptions): Promise<IterationResult>;
  actorCheckpoint(): Promise<Uint8Array>;
  setConfig(c: PpoConfig): void;
  dispose(): void;
  /** Optional full state (PpoTrainer: one safetensors file) and its restore. */
  saveState?(): Promise<unknown> | unknown;
  restoreState?(state: unknown): Promise<void> | void;
  /** Held-out metrics (sampled, and greedy prefixed `greedy_`); without it no eval is posted. */
  evaluate?(count: number, samplesPerPrompt: number): Promise<Record<string, number>>;
  /** Samples the next iteration's rollout now, so that iteration starts with it (prepare, before Start). */
  sampleAhead?(): Promise<void>;
  /** Optional cheap device-side copy of every weight and optimiser state, and its restore. */
  deviceSnapshot?(): unknown;
  restoreDeviceSnapshot?(snapshot: unknown): void;
  /** The config the trainer actually runs (PpoTrainer: its live object; the NaN advice reads it). */
  readonly config?: PpoConfig;
}

/** Called as each kernel's pipeline is built: `done` of `total`, `ms` since compilation began. */
export type CompileProgress = (done: number, total: number, ms: number) => void;

/** With a device snapshot, the host copy of the actor (for a lost device) is refreshed this often. */
export const HOST_COPY_EVERY = 10;

type SavedState = { kind: 'device' | 'state'; value: unknown } | null;

export interface HostDeps {
  post(msg: WorkerToPage, transfer?: Transferable[]): void;
  /**
   * A backend for the choice; `onLost` is called if its device goes away later. `destroy` (WebGPU
   * only) destroys the device, for the debugDestroyDevice test hook. `compiled` (WebGPU only)
   * settles when the kernels' pipelines, compiled in the background from the moment the device
   * exists, are built: the first trainer waits for it rather than compiling them one by one;
   * `onCompiled` reports each pipeline built.
   */
  makeBackend(
    choice: BackendChoice,
    onLost: (reason: string) => void,
    onCompiled?: CompileProgress,
  ): Promise<{ be: Backend; adapter: string; destroy?: () => void; compiled?: Promise<void> }>;
  /** Bytes of a shipped checkpoint by file stem, e.g. "sentiment" or "sentiment_rm". */
  fetchCheckpoint(stem: string): Promise<Uint8Array>;
  createTrainer(init: TrainerInit): Promise<TrainerLike>;
  /** Resolves on a later macrotask, letting queued messages in. */
  tick(): Promise<void>;
}

/** Config fields the trainer cannot take mid-run (plus the reward source): a change rebuilds it. */
const REBUILD_FIELDS: readonly (keyof PpoConfig)[] = [...RESTART_FIELDS, 'rewardSource'];

/** The first non-finite metric (any of them: a NaN anywhere stops the run), or null. */
export function badMetric(metrics: Record<string, number>): { name: string; value: number } | null {
  for (const [name, v] of Object.entries(metrics)) if (!Number.isFinite(v)) return { name, value: v };
  return null;
}

/** File stem of the reward model shipped for a task. */
export const rewardModelStem = (task: string) => `${task}_rm`;

export class TrainerHost {
  private be: Backend | null = null;
  private config: PpoConfig = { ...DEFAULT_CONFIG };
  private trainer: TrainerLike | null = null;
  private rewardModel: RewardModel | null = null;
  /**
   * Shipped checkpoints by file stem, fetched once: the current task's is requested as soon as the
   * page sends its config (before Start), so it arrives while the kernels compile. A failed fetch
   * is forgotten, so the next use tries again and reports its own error.
   */
  private fetched = new Map<string, Promise<Uint8Array>>();
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
  /** The `untilIter` of the last start: the trainer's iteration count where the loop stops by itself. */
  private stopAt: number | null = null;
  /** Which trainer the held-out evaluations belong to, and the iteration count last evaluated. */
  private evaluated: { trainer: TrainerLike; iter: number } | null = null;
  /** The backend chosen at init (a lost WebGPU device is replaced by another of the same). */
  private choice: BackendChoice | null = null;
  private destroyDevice: (() => void) | null = null;
  /** The newest `prepare` message's number: an older one still queued skips its work. */
  private prepareWanted = 0;
  /**
   * The SFT baseline evaluation made by `prepare` for this trainer and config (`key`): the first
   * iteration posts it instead of evaluating again.
   */
  private prepared: { trainer: TrainerLike; key: string; values: Record<string, number>; prompts: number; seconds: number } | null = null;
  /** Whether the current backend's pipelines are built (or it has none to build). */
  private compiledDone = true;
  /** The actor bytes the current trainer was built from (its weights until it iterates). */
  private trainerSource: Uint8Array | null = null;
  /** The current backend's background pipeline compilation (never rejects). */
  private compiled: Promise<void> | null = null;
  /** Each backend's onLost only counts while it is the current one. */
  private deviceGen = 0;
  /** The last full state this host produced (saveState) or loaded: what a lost device rebuilds from. */
  private lastState: { iter: number; value: unknown } | null = null;
  /** When an iteration failed while training (a device loss can reject a readback before device.lost fires). */
  private failedWhileRunningAt = -Infinity;
  private testHooks = false;
  /** Test hook: the next device request of a recovery fails. */
  private failReacquire = false;

  constructor(private readonly deps: HostDeps) {}

  /** Entry point for every page → worker message; resolves when the command has been handled. */
  handle(msg: PageToWorker): Promise<void> {
    switch (msg.type) {
      case 'init':
        this.testHooks = msg.testHooks === true;
        return this.enqueue(() => this.init(msg.backend));
      case 'pause':
        // Not queued: it must take effect while an iteration is in flight.
        if (this.running) {
          this.running = false;
          this.deps.post({ type: 'paused', reason: 'paused by the user', stage: this.stage });
        }
        return Promise.resolve();
      case 'start':
        this.stopAt = msg.untilIter ?? null;
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
      case 'prepare': {
        const n = ++this.prepareWanted;
        return this.enqueue(() => this.prepare(n));
      }
      case 'snapshot':
        return this.enqueue(() => this.snapshot(msg.requestId), msg.requestId);
      case 'saveState':
        return this.enqueue(() => this.saveFullState(msg.quiet === true, msg.requestId), msg.requestId);
      case 'loadState':
        this.running = false;
        return this.enqueue(() => this.loadFullState(new Uint8Array(msg.bytes), msg.requestId), msg.requestId);
      case 'trainRewardModel':
        return this.enqueue(() => this.trainRewardModel(msg.pairs, msg.requestId), msg.requestId);
      case 'debugDestroyDevice':
        // Not queued: it must hit an iteration in flight.
        if (!this.testHooks) return this.refuseDebug(msg.type);
        if (!this.destroyDevice) {
          this.deps.post({ type: 'error', message: 'debugDestroyDevice: there is no WebGPU device to destroy' });
          return Promise.resolve();
        }
        this.failReacquire = msg.failReacquire === true;
        this.destroyDevice();
        return Promise.resolve();
      case 'debugSetActorLr':
        if (!this.testHooks) return this.refuseDebug(msg.type);
        return this.enqueue(async () => {
          const cfg = (await this.ensureTrainer()).config;
          if (!cfg) throw new Error('debugSetActorLr: this trainer does not expose its config');
          // Deliberately past validateConfig: the live object the trainer's optimiser reads.
          (cfg as { actorLr: number }).actorLr = msg.actorLr;
        });
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

  private refuseDebug(type: string): Promise<void> {
    this.deps.post({ type: 'error', message: `${type} is a test hook and test hooks are off` });
    return Promise.resolve();
  }

  /** `requestId`: the command's, echoed on the error it may end in. */
  private enqueue(op: () => Promise<void>, requestId?: number): Promise<void> {
    const next = this.chain.then(async () => {
      try {
        await op();
      } catch (e) {
        if (this.running) this.failedWhileRunningAt = performance.now();
        this.running = false;
        this.deps.post({ type: 'error', message: e instanceof Error ? e.message : String(e), stage: this.stage === 'idle' ? undefined : this.stage, ...(requestId === undefined ? {} : { requestId }) });
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
        if (await this.stopAtBudget()) break;
        await this.enqueue(() => this.iterate());
        if (await this.stopAtBudget()) break;
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
    this.choice = choice;
    await this.connect(choice);
  }

  /** A fresh backend (and device) for `choice`, announced with `ready`. */
  private async connect(choice: BackendChoice): Promise<string> {
    const gen = ++this.deviceGen;
    const made = await this.deps.makeBackend(
      choice,
      (reason) => {
        if (gen === this.deviceGen) this.onDeviceLost(reason);
      },
      (done, total, ms) => {
        // At most ~20 messages however many kernels: the page shows a counter, not a log.
        if (gen === this.deviceGen && (done === total || done % Math.max(1, Math.ceil(total / 20)) === 0)) this.deps.post({ type: 'compiling', done, total, seconds: ms / 1000 });
      },
    );
    this.be = made.be;
    this.destroyDevice = made.destroy ?? null;
    // A kernel that fails to compile here is compiled again, synchronously, on first use, and its
    // error is reported there with the stage it belongs to.
    this.compiledDone = made.compiled === undefined;
    const compiled: Promise<void> | null =
      made.compiled
        ?.catch(() => undefined)
        .then(() => {
          if (this.compiled === compiled) this.compiledDone = true;
        }) ?? null;
    this.compiled = compiled;
    this.deps.post({ type: 'ready', adapter: made.adapter, backendLabel: made.be.label });
    return made.adapter;
  }

  /**
   * Starts building the decode kernels for the config's model shape beside the fixed kernels, not
   * after them: the trainer waits for the same pipeline when it is made, so Start right after
   * "ready" does not compile it alone. Called when a config arrives, not at connect, where the
   * config may still be the default the page is about to replace (a wasted build cost the first
   * point ~1.5 s). Idempotent per shape; a failure shows where the pipeline is used.
   */
  private precompileDecode(): void {
    const be = this.be;
    if (!be) return;
    const config = this.config;
    void Promise.resolve()
      .then(async () => {
        // The model's sizes are the SFT checkpoint's (the one ensureTrainer will use), not the
        // config's. Only a checkpoint already here or being fetched: this never starts a fetch.
        const actor = await (this.resumeActor ?? this.loaded.actor ?? this.fetched.get(getTask(config.task).name));
        if (actor) await be.precompileShape(decodeShapeOf(config, parseCheckpoint(actor).config));
      })
      .catch(() => undefined);
  }

  private onDeviceLost(reason: string): void {
    if (this.lost) return;
    this.lost = reason || 'unknown reason';
    const wasRunning = this.running || this.looping || performance.now() - this.failedWhileRunningAt < 2000;
    this.running = false;
    const lostAt = this.trainer ? this.trainer.iter : null;
    this.deps.post({ type: 'deviceLost', reason: this.lost, stage: this.stage === 'idle' ? undefined : this.stage, iter: lostAt });
    // Queued: the iteration in flight fails first (its readback is refused) and returns quietly.
    void this.enqueue(() => this.recover(wasRunning, lostAt));
  }

  /** After a device loss: a new device, the trainer rebuilt from the last full state, training resumed. */
  private async recover(wasRunning: boolean, lostAt: number | null): Promise<void> {
    const hadTrainer = this.trainer !== null;
    try {
      this.trainer?.dispose();
    } catch {
      // Its buffers went with the device.
    }
    this.trainer = null;
    this.trainerSource = null;
    this.prepared = null;
    this.rewardModel = null; // lived on the lost device; rebuilt from this.loaded.reward or the shipped file
    this.be = null;
    this.destroyDevice = null;
    this.evaluated = null;
    this.setStage('idle');
    let adapter: string;
    try {
      if (this.failReacquire) {
        this.failReacquire = false;
        throw new Error('no WebGPU adapter came back (debugDestroyDevice test hook)');
      }
      adapter = await this.connect(this.choice ?? 'webgpu');
    } catch (e) {
      this.deps.post({ type: 'deviceUnavailable', message: e instanceof Error ? e.message : String(e), iter: this.lastState?.iter ?? null });
      return; // `lost` stays set: nothing trains until the page switches backend
    }
    this.lost = null;
    let fromIter = 0;
    if (hadTrainer) {
      const trainer = await this.ensureTrainer();
      if (this.lastState && trainer.restoreState) {
        await trainer.restoreState(this.lastState.value);
        fromIter = this.lastState.iter;
      } else {
        fromIter = trainer.iter;
      }
    }
    const replayed = lostAt === null ? 0 : Math.max(0, lostAt - fromIter);
    const resumed = wasRunning && hadTrainer;
    this.deps.post({ type: 'deviceRecovered', adapter, fromIter, lostAt, replayed, resumed });
    if (resumed) {
      this.running = true;
      void this.loop();
    }
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
    if (this.trainer && REBUILD_FIELDS.some((f) => prev[f] !== config[f])) {
      this.running = false;
      this.disposeTrainer();
      this.lastState = null;
    } else if (this.trainer) {
      this.trainer.setConfig(this.config);
    }
    if (!this.trainer) {
      // Before the next trainer is built: fetch what it will need (while the kernels compile).
      if (!this.loaded.actor) void this.prefetch(config.task).catch(() => {});
      this.precompileDecode();
      if (config.rewardSource === 'model' && !this.loaded.reward) void this.prefetch(rewardModelStem(config.task)).catch(() => {});
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
    if (role === 'actor') {
      this.resumeActor = null;
      // The weights a trainer built earlier (e.g. by prepare) started from are not this actor's.
      this.lastGoodActor = null;
    }
    if (role === 'reward') {
      this.rewardModel?.dispose();
      this.rewardModel = null;
    }
    // The next start/step builds a trainer from the loaded weights.
    this.running = false;
    this.disposeTrainer();
    this.lastState = null;
  }

  private async reset(): Promise<void> {
    this.disposeTrainer();
    this.resumeActor = null;
    this.lastState = null;
    this.setStage('idle');
  }

  private async snapshot(requestId: number): Promise<void> {
    let bytes: Uint8Array | null = null;
    // A trainer that has not iterated holds exactly the weights it was built from: export that file as it came.
    if (this.trainer && !this.lost && this.trainer.iter === 0 && this.trainerSource) bytes = this.trainerSource;
    else if (this.trainer && !this.lost) bytes = await this.trainer.actorCheckpoint();
    else bytes = this.lastGoodActor ?? this.loaded.actor ?? null;
    if (!bytes) throw new Error('no actor weights yet: press Start or Step first');
    const buf = bytes.slice().buffer as ArrayBuffer; // an own copy, transferred to the page
    this.deps.post({ type: 'snapshot', bytes: buf, requestId }, [buf]);
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
  private async trainRewardModel(pairs: LabelledPair[], requestId: number): Promise<void> {
    const rm = await this.ensureRewardModel();
    const r = await rm.trainOnLabels(pairs);
    // A host copy of the fine-tuned weights: a lost device rebuilds the reward model from it.
    this.loaded.reward = await rm.checkpoint();
    this.deps.post({ type: 'rewardModelTrained', pairs: pairs.length, accuracy: r.after.accuracy, accuracyBefore: r.before.accuracy, requestId });
  }

  private async ensureTrainer(): Promise<TrainerLike> {
    if (this.trainer) return this.trainer;
    const be = this.requireBackend();
    const task = getTask(this.config.task);
    const actor = this.resumeActor ?? this.loaded.actor ?? (await this.fetchNamed(task.name, `the SFT checkpoint of task "${task.name}"`));
    const rewardModel = this.config.rewardSource === 'model' ? await this.ensureRewardModel() : undefined;
    if (this.compiled) await this.compiled;
    this.trainer = await this.deps.createTrainer({
      be,
      config: this.config,
      actorCheckpoint: actor,
      rewardModel,
      onStage: (s: Stage) => this.setStage(s),
    });
    this.lastGoodActor = actor;
    this.trainerSource = actor;
    return this.trainer;
  }

  /** Starts fetching a shipped checkpoint (once per stem); the promise never rejects unhandled. */
  private prefetch(stem: string): Promise<Uint8Array> {
    let p = this.fetched.get(stem);
    if (!p) {
      p = this.deps.fetchCheckpoint(stem);
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

  private requireBackend(): Backend {
    if (this.lost) throw new Error(`the GPU device was lost (${this.lost}) and no new one is ready; continue on the CPU backend or reload the page`);
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
      // The last iteration of a budget samples no rollout ahead: no iteration follows it.
      result = await trainer.iteration({ sampleNext: this.stopAt === null || trainer.iter + 1 < this.stopAt });
    } catch (e) {
      // A lost device can refuse the readback before device.lost resolves: give it a few turns.
      if (this.choice === 'webgpu') for (let i = 0; i < 5 && !this.lost; i++) await this.deps.tick();
      if (this.lost) return; // onDeviceLost reported it and recovers
      await this.restore(trainer, saved);
      if (e instanceof NonFiniteError) return this.pauseNonFinite(trainer, e.iter, e.stage, e.quantity, e.value);
      throw e;
    }
    if (this.lost) return;
    const bad = badMetric(result.metrics);
    if (bad) {
      await this.restore(trainer, saved);
      return this.pauseNonFinite(trainer, result.iter, stageOfMetric(bad.name), bad.name, bad.value);
    }
    this.setStage('idle');
    const { post } = this.deps;
    post({ type: 'metrics', iter: result.iter, values: result.metrics });
    post({ type: 'samples', iter: result.iter, rows: result.samples });
    post({ type: 'ratios', iter: result.iter, ratios: result.ratios.ratios, advantages: result.ratios.advantages, seqRatios: result.ratios.seqRatios, seqAdvantages: result.ratios.seqAdvantages });
    await this.afterIteration(trainer);
  }

  /** The NaN guard's pause: the state from before iteration `iter` is back; say where and what to change. */
  private pauseNonFinite(trainer: TrainerLike, iter: number, stage: Stage, quantity: string, value: number): void {
    this.running = false;
    const advice = nanAdvice(quantity, trainer.config ?? this.config);
    this.deps.post({
      type: 'paused',
      reason: `non-finite ${quantity} = ${value} in iteration ${iter} (${stage} stage); the state from before that iteration was restored`,
      stage,
      nonFinite: { iter, stage, quantity, value, advice },
    });
    this.setStage('idle');
  }

  /** Evaluates if due, and always at the end of a budget (the point a preset's promise is measured at). */
  private async afterIteration(trainer: TrainerLike): Promise<void> {
    await this.evaluateIfDue(trainer, this.atBudgetEnd(trainer) && this.running);
  }

  private atBudgetEnd(trainer: TrainerLike): boolean {
    return this.stopAt !== null && trainer.iter >= this.stopAt;
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
    const ready = this.prepared;
    this.prepared = null;
    if (done === 0 && ready?.trainer === trainer && ready.key === JSON.stringify(this.config)) {
      this.deps.post({ type: 'eval', iter: 0, values: ready.values, prompts: ready.prompts, seconds: ready.seconds });
      return;
    }
    const { count, samplesPerPrompt } = evalSize(this.config);
    const t0 = performance.now();
    const values = await trainer.evaluate(count, samplesPerPrompt);
    if (this.lost) return;
    this.deps.post({ type: 'eval', iter: done, values, prompts: count, seconds: (performance.now() - t0) / 1000 });
  }

  /**
   * True (and the loop ends, telling the page) once the trainer has done the `untilIter` of the last
   * start. The end-of-budget evaluation runs first if a pause skipped it (the last iteration finished
   * while paused); evaluateIfDue never scores the same iteration twice.
   */
  private async stopAtBudget(): Promise<boolean> {
    const trainer = this.trainer;
    if (!this.running || !trainer || !this.atBudgetEnd(trainer)) return false;
    await this.enqueue(() => this.evaluateIfDue(trainer, true));
    if (!this.running || this.trainer !== trainer) return false;
    this.running = false;
    this.stopAt = null;
    this.deps.post({ type: 'finished', iter: trainer.iter });
    return true;
  }

  /** See the `prepare` message: the trainer and its iteration-0 evaluation, made ahead of Start. */
  private async prepare(n: number): Promise<void> {
    const idle = () => n === this.prepareWanted && !this.running && !this.lost && this.be !== null;
    if (!idle() || (this.trainer && this.trainer.iter > 0)) return;
    if (this.compiled && !this.compiledDone) {
      // Wait for the kernels outside the command queue, so that a command sent meanwhile (an
      // export, a checkpoint, Start) is not held up behind it; then queue the preparation again.
      this.precompileDecode();
      void this.compiled.then(() => {
        if (n === this.prepareWanted) void this.enqueue(() => this.prepare(n));
      });
      return;
    }
    const trainer = await this.ensureTrainer();
    if (!idle() || trainer.iter !== 0 || !trainer.evaluate || this.config.evalEvery <= 0) return;
    const key = JSON.stringify(this.config);
    if (this.prepared?.trainer === trainer && this.prepared.key === key) return;
    const { count, samplesPerPrompt } = evalSize(this.config);
    const t0 = performance.now();
    const values = await trainer.evaluate(count, samplesPerPrompt);
    if (this.lost || this.trainer !== trainer) return;
    this.prepared = { trainer, key, values, prompts: count, seconds: (performance.now() - t0) / 1000 };
    // The first iteration's rollout too: after Start it then waits on the device once, like the rest.
    if (idle() && trainer.iter === 0) await trainer.sampleAhead?.();
  }

  /** The trainer's full state as bytes for the page (resume after a reload). */
  private async saveFullState(quiet: boolean, requestId: number): Promise<void> {
    const t = this.trainer;
    if ((!t || this.lost) && quiet) return;
    if (!t || this.lost) throw new Error('no trainer state yet: press Start or Step first');
    const bytes = t.saveState ? await t.saveState() : null;
    if (!(bytes instanceof Uint8Array)) throw new Error('this trainer cannot save its full state');
    this.lastState = { iter: t.iter, value: bytes };
    const buf = bytes.slice().buffer as ArrayBuffer;
    this.deps.post({ type: 'state', iter: t.iter, bytes: buf, requestId }, [buf]);
  }

  /**
   * Resumes from a full state: the file is validated first (a bad one changes nothing), its config
   * applied, and the trainer (built or kept) takes every weight, moment, β and the counter from it.
   */
  private async loadFullState(bytes: Uint8Array, requestId: number): Promise<void> {
    const st = decodeTrainerState(bytes);
    await this.setConfig(st.config);
    const trainer = await this.ensureTrainer();
    if (!trainer.restoreState) throw new Error('this trainer cannot load a full state');
    await trainer.restoreState(bytes);
    this.lastState = { iter: st.iteration, value: bytes };
    this.evaluated = null;
    this.deps.post({ type: 'stateLoaded', iter: st.iteration, config: st.config, requestId });
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
    this.trainerSource = null;
    this.prepared = null;
  }
}
