// The trainer worker's logic as a plain class, so Node tests drive it without a Worker: it takes
// protocol messages (page → worker), routes each to the part of the worker that does that job, and
// posts protocol messages back. The parts: the device session (deviceSession.ts), the checkpoints
// (checkpointCache.ts), the current trainer and the host copies of its state (trainerSlot.ts), the
// reward model (rewardModelSlot.ts), training runs (runLoop.ts) and held-out evaluation
// (heldOutEvaluator.ts). Commands that touch the trainer run one at a time (commandQueue.ts);
// `pause`, `start` and the device-destroying test hook act at once, between or during iterations.
import { DEFAULT_CONFIG, type PpoConfig } from '../rl/config.ts';
import { checkRewardFunction, loadRewardSandbox } from '../rl/rewardFunction/sandbox.ts';
import { getTask } from '../tasks/index.ts';
import { RESTART_FIELDS } from '../rl/trainer.ts';
import { decodeTrainerState } from '../rl/trainerState.ts';
import { CheckpointCache } from './checkpointCache.ts';
import { CommandQueue } from './commandQueue.ts';
import { DeviceSession, type SessionOwner } from './deviceSession.ts';
import { decodeKernelsAhead } from './firstKernels.ts';
import { HeldOutEvaluator } from './heldOutEvaluator.ts';
import { HfSession } from './hfSession.ts';
import { FileListFolder } from '../model/hf/browserFolder.ts';
import type { HostDeps } from './hostDeps.ts';
import type { BackendChoice, CheckpointRole, LabelledPair, PageToWorker } from './protocol.ts';
import { RewardModelSlot } from './rewardModelSlot.ts';
import { RunLoop } from './runLoop.ts';
import { SftStage } from './sftStage.ts';
import type { ModelDims } from '../rl/sftRun.ts';
import { StageReporter } from './stageReporter.ts';
import { TrainerSlot } from './trainerSlot.ts';
import { Rng } from '../util/rng.ts';

/** Config fields the trainer cannot take mid-run (plus the reward source): a change rebuilds it. */
const REBUILD_FIELDS: readonly (keyof PpoConfig)[] = [...RESTART_FIELDS, 'rewardSource'];

export class TrainerHost {
  private config: PpoConfig = { ...DEFAULT_CONFIG };
  private readonly stage: StageReporter;
  private readonly queue: CommandQueue;
  private readonly session: DeviceSession;
  private readonly checkpoints: CheckpointCache;
  private readonly trainers: TrainerSlot;
  private readonly rewardModel: RewardModelSlot;
  private readonly evals: HeldOutEvaluator;
  private readonly run: RunLoop;
  private readonly sft: SftStage;
  /** The visitor's own Hugging Face model, sampled from beside the trainer. */
  private readonly hf: HfSession;
  /** The newest `prepare` message's number: an older one still queued skips its work. */
  private prepareWanted = 0;
  private testHooks = false;
  /**
   * The newest config and the actors the page has sent, recorded as they arrive, before the
   * command queue applies them: what a device connecting meanwhile builds its first kernels for.
   */
  private readonly announced = { config: null as PpoConfig | null, actors: new Map<string, Uint8Array>() };

  constructor(private readonly deps: HostDeps) {
    this.stage = new StageReporter(deps.post);
    this.queue = new CommandQueue((e, requestId) => this.reportFailure(e, requestId));
    this.session = new DeviceSession(deps, this.stage, this.sessionOwner());
    this.checkpoints = new CheckpointCache(deps.fetchCheckpoint);
    this.rewardModel = new RewardModelSlot(this.checkpoints);
    this.trainers = new TrainerSlot({
      createTrainer: deps.createTrainer,
      session: this.session,
      checkpoints: this.checkpoints,
      rewardModel: this.rewardModel,
      config: () => this.config,
      onStage: (s) => this.stage.set(s),
    });
    this.evals = new HeldOutEvaluator(
      deps.post,
      () => this.config,
      () => this.session.lost,
    );
    this.sft = new SftStage(deps.post);
    this.hf = new HfSession({ post: deps.post });
    this.run = new RunLoop({
      deps,
      queue: this.queue,
      stage: this.stage,
      session: this.session,
      trainers: this.trainers,
      evals: this.evals,
    });
  }

  /** Entry point for every page → worker message; resolves when the command has been handled. */
  handle(msg: PageToWorker): Promise<void> {
    const enqueue = (op: () => Promise<void>, requestId?: number) => this.queue.run(op, requestId);
    switch (msg.type) {
      case 'init':
        this.testHooks = msg.testHooks === true;
        return enqueue(() => this.init(msg.backend));
      case 'pause':
        this.run.pause(msg.captureInFlight === true); // not queued: it must take effect while an iteration is in flight
        return Promise.resolve();
      case 'start':
        this.run.start(msg.untilIter, msg.captureLast === true);
        return Promise.resolve();
      case 'step':
        return this.run.step();
      case 'setCapture':
        this.run.capture = msg.on === true; // not queued: the next iteration reads it
        return Promise.resolve();
      case 'setConfig':
        this.announced.config = msg.config;
        return enqueue(() => this.setConfig(msg.config)).finally(() => {
          if (this.announced.config === msg.config) this.announced.config = null;
        });
      case 'loadCheckpoint': {
        const bytes = new Uint8Array(msg.bytes);
        const task = msg.task ?? this.announced.config?.task ?? this.config.task;
        if (msg.role === 'actor') this.announced.actors.set(task, bytes);
        return enqueue(() => this.loadCheckpoint(msg.role, bytes, msg.task ?? this.config.task)).finally(() => {
          if (this.announced.actors.get(task) === bytes) this.announced.actors.delete(task);
        });
      }
      case 'reset':
        this.run.halt();
        return enqueue(() => this.reset()).then(() => this.deps.post({ type: 'resetDone' }));
      case 'prepare': {
        const n = ++this.prepareWanted;
        return enqueue(() => this.prepare(n));
      }
      case 'snapshot':
        return enqueue(() => this.snapshot(msg.requestId), msg.requestId);
      case 'saveState':
        return enqueue(() => this.saveState(msg.requestId, msg.quiet === true), msg.requestId);
      case 'loadState':
        this.run.halt();
        return enqueue(() => this.loadState(msg.requestId, new Uint8Array(msg.bytes)), msg.requestId);
      case 'trainRewardModel':
        return enqueue(() => this.trainRewardModel(msg.requestId, msg.pairs), msg.requestId);
      case 'trainSft':
        this.run.halt();
        return enqueue(() => this.trainSft(msg.requestId, msg.dims, msg.phaseSteps), msg.requestId);
      case 'cancelSft':
        this.sft.cancel(); // not queued: the run in flight polls it before each step
        return Promise.resolve();
      case 'timeSft':
        return enqueue(() => this.timeSft(msg.requestId, msg.dims), msg.requestId);
      case 'hfOpen':
        return enqueue(() => this.hf.open(this.session.requireBackend(), new FileListFolder(msg.files, msg.label), msg.requestId), msg.requestId);
      case 'hfGenerate': {
        const { type: _, requestId, ...req } = msg;
        return enqueue(() => this.hf.generate(req, requestId), requestId);
      }
      case 'hfClose':
        return enqueue(async () => this.hf.close());
      case 'hfTrain':
        return enqueue(() => this.hf.train({ settings: msg.settings, rewardFunction: msg.rewardFunction, resume: msg.resume }, msg.requestId), msg.requestId);
      case 'hfLoadAdapter':
        return enqueue(() => this.hf.loadAdapter({ config: msg.config, weights: msg.weights, state: msg.state }, msg.requestId), msg.requestId);
      case 'hfTrainStop':
        this.hf.stopTraining(); // not queued: the run in flight polls it before each iteration
        return Promise.resolve();
      case 'hfExportAdapter':
        return enqueue(() => this.hf.exportAdapter(msg.requestId, msg.trainingState === true), msg.requestId);
      case 'useShippedActor':
        return enqueue(async () => this.useActor(null, msg.task));
      case 'debugDestroyDevice':
        if (!this.testHooks) return this.refuseDebug(msg.type);
        // Not queued: it must hit an iteration in flight.
        if (!this.session.destroyForTest(msg.failReacquire === true)) this.deps.post({ type: 'error', message: 'debugDestroyDevice: there is no WebGPU device to destroy' });
        return Promise.resolve();
      case 'debugSetActorLr':
        if (!this.testHooks) return this.refuseDebug(msg.type);
        return enqueue(async () => {
          // Deliberately past validateConfig: the live object the trainer's optimiser reads.
          ((await this.trainers.ensure()).config as { actorLr: number }).actorLr = msg.actorLr;
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
    return this.run.isRunning;
  }

  get currentConfig(): PpoConfig {
    return this.config;
  }

  private reportFailure(e: unknown, requestId?: number): void {
    this.run.failed();
    const message = e instanceof Error ? e.message : String(e);
    this.deps.post({ type: 'error', message, stage: this.stage.busy, ...(requestId === undefined ? {} : { requestId }) });
    this.stage.set('idle');
  }

  private refuseDebug(type: string): Promise<void> {
    this.deps.post({ type: 'error', message: `${type} is a test hook and test hooks are off` });
    return Promise.resolve();
  }

  private async init(choice: BackendChoice): Promise<void> {
    this.disposeTrainer();
    await this.session.open(choice);
  }

  /** `config` was checked where it entered the page (a field, a preset, a link, a file): not checked again. */
  private async setConfig(config: PpoConfig): Promise<void> {
    const prev = this.config;
    this.config = { ...config };
    if (prev.task !== config.task) {
      // A loaded reward model belongs to the previous task's tokenizer (actors are kept per task).
      this.checkpoints.forgetLoadedReward();
      this.rewardModel.dispose();
    }
    const trainer = this.trainers.current;
    if (trainer && REBUILD_FIELDS.some((f) => prev[f] !== config[f])) {
      this.run.halt();
      this.disposeTrainer();
      this.trainers.forgetSaved();
    } else if (trainer) {
      trainer.setConfig(this.config);
    }
    if (config.rewardSource === 'function') await this.reportRewardFunctionCheck(config);
    if (!this.trainers.current) {
      // Before the next trainer is built: fetch what it will need while the kernels compile.
      this.checkpoints.prefetchFor(this.config);
      this.trainers.precompileNext();
    }
  }

  /** Compiles the written reward function and calls it once on a sample of the task, so the page can name a problem before Start. */
  private async reportRewardFunctionCheck(config: PpoConfig): Promise<void> {
    const sandbox = await loadRewardSandbox();
    const { prompt, response } = getTask(config.task).sftExample(new Rng(config.seed));
    const result = checkRewardFunction(sandbox, config.rewardFunction, { prompt, response });
    this.deps.post({ type: 'rewardFunctionChecked', source: config.rewardFunction, ...result });
  }

  private async loadCheckpoint(role: CheckpointRole, bytes: Uint8Array, task: string): Promise<void> {
    this.checkpoints.load(role, bytes, task);
    // Another task's actor waits for that task; the current trainer is not affected.
    if (task !== this.config.task) return;
    if (role === 'actor') this.trainers.forgetGoodActor();
    if (role === 'reward') this.rewardModel.dispose();
    // The next start/step builds a trainer from the loaded weights.
    this.run.halt();
    this.disposeTrainer();
    this.trainers.forgetSaved();
  }

  /** SFT in the tab: its model becomes the actor, as a checkpoint the page loaded does. */
  private async trainSft(requestId: number, dims: ModelDims, phaseSteps?: number): Promise<void> {
    this.disposeTrainer(); // its buffers are freed for the SFT model; the next Start rebuilds it
    const done = await this.sft.train(this.session.requireBackend(), this.config, requestId, dims, phaseSteps);
    if (!done) return;
    this.useActor(done.bytes, this.config.task);
    const buf = done.bytes.slice().buffer as ArrayBuffer;
    this.deps.post({ type: 'sftDone', requestId, bytes: buf, meta: done.meta, seconds: done.seconds }, [buf]);
  }

  /**
   * Times SFT steps for the page's estimate: work Start does not need. While the first kernels
   * compile it queues itself again behind them, so behind the first iteration or the preparation
   * for it when either was asked for by then, and only then lets the other kernels build.
   */
  private async timeSft(requestId: number, dims: ModelDims): Promise<void> {
    const compiled = this.session.compiled;
    if (compiled && this.session.compiling) {
      void compiled.then(() => this.queue.run(() => this.timeSft(requestId, dims), requestId));
      return;
    }
    this.session.compileRest();
    await this.sft.time(this.session.requireBackend(), this.config, requestId, dims);
  }

  /** The next trainer of `task` starts from `bytes` (null: the shipped checkpoint). */
  private useActor(bytes: Uint8Array | null, task: string): void {
    if (bytes) this.checkpoints.load('actor', bytes, task);
    else this.checkpoints.forgetActor(task);
    if (task !== this.config.task) return;
    this.trainers.forgetGoodActor();
    this.run.halt();
    this.disposeTrainer();
    this.trainers.forgetSaved();
  }

  private async reset(): Promise<void> {
    this.disposeTrainer();
    this.trainers.forgetSaved();
    this.stage.set('idle');
  }

  /** See the `prepare` message: the trainer and its iteration-0 evaluation, made ahead of Start. */
  private async prepare(n: number): Promise<void> {
    const wanted = () => n === this.prepareWanted && !this.run.isRunning && this.session.usable;
    if ((this.trainers.current?.iter ?? 0) > 0) this.session.compileRest();
    if (!wanted() || (this.trainers.current?.iter ?? 0) > 0) return;
    const compiled = this.session.compiled;
    if (compiled && this.session.compiling) {
      // Wait for the kernels outside the command queue, so that a command sent meanwhile (an
      // export, a checkpoint, Start) is not held up behind it; then queue the preparation again.
      this.trainers.precompileNext();
      void compiled.then(() => {
        if (n === this.prepareWanted) void this.queue.run(() => this.prepare(n));
      });
      return;
    }
    try {
      const trainer = await this.trainers.ensure();
      if (!wanted()) return;
      if (!(await this.evals.prepare(trainer, () => this.trainers.current === trainer))) return;
      // The first iteration's rollout too: after Start it then waits on the device once, like the rest.
      if (wanted() && trainer.iter === 0) await trainer.sampleAhead();
    } finally {
      // Prepared (or moot): the other kernels may build now, unless a first iteration is under way.
      if (!this.run.isRunning) this.session.compileRest();
    }
  }

  private async snapshot(requestId: number): Promise<void> {
    const bytes = (await this.trainers.actorBytes(!this.session.lost)) ?? this.checkpoints.loadedActor(this.config.task);
    if (!bytes) throw new Error('no actor weights yet: press Start or Step first');
    const buf = bytes.slice().buffer as ArrayBuffer; // an own copy, transferred to the page
    this.deps.post({ type: 'snapshot', requestId, bytes: buf }, [buf]);
  }

  /** The trainer's full state as bytes for the page (resume after a reload). */
  private async saveState(requestId: number, quiet: boolean): Promise<void> {
    const t = this.trainers.current;
    if (!t || this.session.lost) {
      if (quiet) return;
      throw new Error('no trainer state yet: press Start or Step first');
    }
    const { iter, bytes } = await this.trainers.save(t);
    const buf = bytes.slice().buffer as ArrayBuffer;
    this.deps.post({ type: 'state', requestId, iter, bytes: buf }, [buf]);
  }

  /**
   * Resumes from a full state: the file is validated first (a bad one changes nothing), its config
   * applied, and the trainer (built or kept) takes every weight, moment, β and the counter from it.
   */
  private async loadState(requestId: number, bytes: Uint8Array): Promise<void> {
    const st = decodeTrainerState(bytes);
    await this.setConfig(st.config);
    const trainer = await this.trainers.ensure();
    await this.trainers.load(trainer, bytes, st.iteration);
    this.evals.forget();
    this.deps.post({ type: 'stateLoaded', requestId, iter: st.iteration, config: st.config });
  }

  private async trainRewardModel(requestId: number, pairs: LabelledPair[]): Promise<void> {
    const r = await this.rewardModel.train(this.session.requireBackend(), this.config.task, pairs);
    this.deps.post({ type: 'rewardModelTrained', requestId, pairs: pairs.length, ...r });
  }

  private disposeTrainer(): void {
    this.trainers.dispose();
    this.evals.forget();
  }

  /** What a device loss asks of the rest of the worker (see DeviceSession). */
  private sessionOwner(): SessionOwner {
    return {
      halt: () => {
        const wasTraining = this.run.wasTraining;
        this.run.halt();
        return { wasTraining, lostAt: this.trainers.current?.iter ?? null };
      },
      enqueue: (op) => void this.queue.run(op),
      forgetDevice: () => {
        this.rewardModel.forget(); // rebuilt from the page's copy or the shipped file
        this.evals.forget();
        this.hf.forgetDevice();
        return this.trainers.drop();
      },
      rebuild: async () => this.trainers.restoreSaved(await this.trainers.ensure()),
      savedIter: () => this.trainers.savedIter,
      resume: () => this.run.resume(),
      kernelsAhead: () => {
        const config = this.announced.config ?? this.config;
        return decodeKernelsAhead(config, this.announced.actors.get(config.task) ?? this.checkpoints.loadedActor(config.task));
      },
    };
  }
}
