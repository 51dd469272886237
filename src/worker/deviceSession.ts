// The backend the worker trains on, and its WebGPU device's life. Connecting announces `ready` and
// reports pipeline compilation as it goes. When the device is lost the session reports
// `deviceLost`, asks for a new device of the same kind and lets its owner rebuild the trainer on
// it (`deviceRecovered`, with the iterations replayed); if none comes back it reports
// `deviceUnavailable` and stays lost, and the page offers the CPU backend with its saved state.
import type { Backend } from '../backend/backend.ts';
import type { KernelSpec } from '../gpu/pipelines.ts';
import type { HostDeps } from './hostDeps.ts';
import type { BackendChoice } from './protocol.ts';
import type { StageReporter } from './stageReporter.ts';

/** What a device loss asks of the rest of the worker. */
export interface SessionOwner {
  /** Stops training: whether it was under way, and the iterations the trainer had done (null: no trainer). */
  halt(): { wasTraining: boolean; lostAt: number | null };
  /** Runs `op` in the command queue, after the iteration in flight (whose readback the loss refuses). */
  enqueue(op: () => Promise<void>): void;
  /** Forgets everything that lived on the lost device; whether a trainer went with it. */
  forgetDevice(): boolean;
  /** Rebuilds the trainer on the new device from the last full state kept; the iteration it resumes from. */
  rebuild(): Promise<number>;
  /** The iteration of the last full state kept, which the page can continue from elsewhere. */
  savedIter(): number | null;
  /** Trains on after a recovery. */
  resume(): void;
  /** Kernels to build before the first ones on a new device (makeBackend's `ahead`). */
  kernelsAhead(): readonly KernelSpec[];
}

/** A WebGPU device refusing a readback can come before its device.lost: turns to wait for that. */
const LOSS_SETTLE_TURNS = 5;

export class DeviceSession {
  private be: Backend | null = null;
  private choice: BackendChoice | null = null;
  /** Each backend's callbacks only count while it is the current one. */
  private generation = 0;
  private lostReason: string | null = null;
  private destroyDevice: (() => void) | null = null;
  /** The current backend's background pipeline compilation (never rejects), and whether it is done. */
  private compilation: Promise<void> | null = null;
  private compiledAll = true;
  /** Builds the current backend's other kernels (after the first ones); null once asked, or when there are none. */
  private rest: (() => void) | null = null;
  /** Test hook: the next device request of a recovery fails. */
  private failReacquire = false;

  constructor(
    private readonly deps: Pick<HostDeps, 'post' | 'makeBackend' | 'tick'>,
    private readonly stage: StageReporter,
    private readonly owner: SessionOwner,
  ) {}

  /** The backend, or null before init and after a loss. */
  get backend(): Backend | null {
    return this.be;
  }

  get lost(): boolean {
    return this.lostReason !== null;
  }

  /** Whether there is a backend to train on now. */
  get usable(): boolean {
    return this.be !== null && this.lostReason === null;
  }

  /** Settles when the pipelines compiling in the background are built; null when there are none. */
  get compiled(): Promise<void> | null {
    return this.compilation;
  }

  get compiling(): boolean {
    return this.compilation !== null && !this.compiledAll;
  }

  /**
   * Starts building the kernels the first iteration does not need, once per backend: called when
   * the first iteration is done or a prepared trainer waits for Start, so they never compete with
   * it. A kernel used before then is compiled on first use.
   */
  compileRest(): void {
    const rest = this.rest;
    this.rest = null;
    rest?.();
  }

  /** A fresh backend for `choice` (init), replacing any earlier one. */
  async open(choice: BackendChoice): Promise<void> {
    this.be = null;
    this.lostReason = null;
    this.choice = choice;
    await this.connect(choice);
  }

  requireBackend(): Backend {
    if (this.lostReason) throw new Error(`the GPU device was lost (${this.lostReason}) and no new one is ready; continue on the CPU backend or reload the page`);
    if (!this.be) throw new Error('the trainer is not initialised yet (no init message)');
    return this.be;
  }

  /** Test hook: destroys the WebGPU device now; false when there is none. */
  destroyForTest(failReacquire: boolean): boolean {
    if (!this.destroyDevice) return false;
    this.failReacquire = failReacquire;
    this.destroyDevice();
    return true;
  }

  /** After an iteration failed: whether it was the device going away (then the session handles it). */
  async failedByLoss(): Promise<boolean> {
    if (this.choice === 'webgpu') for (let i = 0; i < LOSS_SETTLE_TURNS && !this.lostReason; i++) await this.deps.tick();
    return this.lostReason !== null;
  }

  private async connect(choice: BackendChoice): Promise<string> {
    const gen = ++this.generation;
    const made = await this.deps.makeBackend(
      choice,
      (reason) => {
        if (gen === this.generation) this.onLost(reason);
      },
      (done, total, ms) => {
        // At most ~20 messages however many kernels: the page shows a counter, not a log.
        if (gen === this.generation && (done === total || done % Math.max(1, Math.ceil(total / 20)) === 0)) this.deps.post({ type: 'compiling', done, total, seconds: ms / 1000 });
      },
      () => this.owner.kernelsAhead(),
    );
    this.be = made.be;
    this.destroyDevice = made.destroy ?? null;
    // A kernel that fails to compile here is compiled again, synchronously, on first use, and its
    // error is reported there with the stage it belongs to.
    this.compiledAll = made.compiled === undefined;
    const compilation: Promise<void> | null =
      made.compiled
        ?.catch(() => undefined)
        .then(() => {
          if (this.compilation === compilation) this.compiledAll = true;
        }) ?? null;
    this.compilation = compilation;
    const compileRest = made.compileRest;
    this.rest = compileRest ? () => void (compilation ?? Promise.resolve()).then(compileRest).catch(() => undefined) : null;
    this.deps.post({ type: 'ready', adapter: made.adapter, backendLabel: made.be.label });
    return made.adapter;
  }

  private onLost(reason: string): void {
    if (this.lostReason) return;
    this.lostReason = reason || 'unknown reason';
    const { wasTraining, lostAt } = this.owner.halt();
    this.deps.post({ type: 'deviceLost', reason: this.lostReason, stage: this.stage.busy, iter: lostAt });
    this.owner.enqueue(() => this.recover(wasTraining, lostAt));
  }

  /** A new device, the trainer rebuilt on it from the last full state, training resumed. */
  private async recover(wasTraining: boolean, lostAt: number | null): Promise<void> {
    const hadTrainer = this.owner.forgetDevice();
    this.be = null;
    this.destroyDevice = null;
    this.stage.set('idle');
    let adapter: string;
    try {
      if (this.failReacquire) {
        this.failReacquire = false;
        throw new Error('no WebGPU adapter came back (debugDestroyDevice test hook)');
      }
      adapter = await this.connect(this.choice ?? 'webgpu');
    } catch (e) {
      this.deps.post({ type: 'deviceUnavailable', message: e instanceof Error ? e.message : String(e), iter: this.owner.savedIter() });
      return; // still lost: nothing trains until the page switches backend
    }
    this.lostReason = null;
    const fromIter = hadTrainer ? await this.owner.rebuild() : 0;
    const replayed = lostAt === null ? 0 : Math.max(0, lostAt - fromIter);
    const resumed = wasTraining && hadTrainer;
    this.deps.post({ type: 'deviceRecovered', adapter, fromIter, lostAt, replayed, resumed });
    if (resumed) this.owner.resume();
  }
}
