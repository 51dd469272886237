// Training: `start` iterates until paused, or until the trainer has done the `untilIter` of the
// last start (then `finished`, after the end-of-budget evaluation); `step` does exactly one
// iteration; `pause` only clears a flag, which takes effect at the next iteration boundary. The
// loop queues one iteration at a time and yields to the event loop between them, so `pause`,
// `step`, `snapshot` and `setConfig` are handled between iterations. Each iteration runs under the
// NaN guard (nanGuard.ts) and posts its metrics, samples and ratios, and its trace while the page
// asks for captures (setCapture). A pause that asks for it captures the iteration it lets finish,
// decided as late as the trainer allows (IterationOptions.lateCapture), so the paused state has
// an iteration to inspect without training one more.
import { RewardFunctionError, type RewardFunctionProblem } from '../rl/rewardFunction/problem.ts';
import type { IterationResult } from '../rl/trainer.ts';
import type { CommandQueue } from './commandQueue.ts';
import type { DeviceSession } from './deviceSession.ts';
import type { HeldOutEvaluator } from './heldOutEvaluator.ts';
import type { HostDeps, TrainerLike } from './hostDeps.ts';
import { nonFiniteOfError, nonFiniteOfMetrics, nonFinitePause, type NonFinite } from './nanGuard.ts';
import type { StageReporter } from './stageReporter.ts';
import type { TrainerSlot } from './trainerSlot.ts';
import { traceMessage } from './traceMessage.ts';
import { USER_PAUSE_REASON } from './protocol.ts';

/** An iteration failed this recently before a device loss: the loss interrupted training. */
const LOSS_AFTER_FAILURE_MS = 2000;

export interface RunParts {
  deps: Pick<HostDeps, 'post' | 'tick'>;
  queue: CommandQueue;
  stage: StageReporter;
  session: DeviceSession;
  trainers: TrainerSlot;
  evals: HeldOutEvaluator;
}

export class RunLoop {
  private running = false;
  private looping = false;
  /** The `untilIter` of the last start: the trainer's iteration count where the loop stops by itself. */
  private stopAt: number | null = null;
  private failedWhileRunningAt = -Infinity;
  /** Whether iterations capture their trace for the inspector. */
  capture = false;
  /** The last start asked for the trace of the iteration that reaches `stopAt`. */
  private captureLast = false;
  /** An iteration is between its start and its result. */
  private inFlight = false;
  /** A pause asked for the iteration in flight to be captured. */
  private captureInFlight = false;

  constructor(private readonly p: RunParts) {}

  /** Whether the loop is (still) meant to run. */
  get isRunning(): boolean {
    return this.running;
  }

  /** Whether training was under way: running, or an iteration failed just now (a device loss can refuse a readback before device.lost fires). */
  get wasTraining(): boolean {
    return this.running || this.looping || performance.now() - this.failedWhileRunningAt < LOSS_AFTER_FAILURE_MS;
  }

  start(untilIter?: number, captureLast = false): void {
    this.stopAt = untilIter ?? null;
    this.captureLast = captureLast;
    this.resume();
  }

  /** Trains on with the budget already set. */
  resume(): void {
    if (this.running) return;
    this.running = true;
    void this.loop();
  }

  /**
   * The user's pause: stops at the next iteration boundary and says so. With `captureInFlight`, the
   * iteration it lets finish is captured if its final readback has not yet been read (only that
   * one: between iterations there is none, and nothing later is captured).
   */
  pause(captureInFlight = false): void {
    if (!this.running) return;
    this.running = false;
    if (captureInFlight && this.inFlight) this.captureInFlight = true;
    this.p.deps.post({ type: 'paused', reason: USER_PAUSE_REASON, stage: this.p.stage.now });
  }

  /** Stops without a message: the page asked for something else (a step, a reset, new weights). */
  halt(): void {
    this.running = false;
  }

  /** A command failed: training stops. */
  failed(): void {
    if (this.running) this.failedWhileRunningAt = performance.now();
    this.running = false;
  }

  step(): Promise<void> {
    this.running = false;
    return this.p.queue.run(() => this.iterate());
  }

  private async loop(): Promise<void> {
    if (this.looping) return;
    this.looping = true;
    try {
      while (this.running) {
        if (await this.stopAtBudget()) break;
        await this.p.queue.run(() => this.iterate());
        if (await this.stopAtBudget()) break;
        await this.p.deps.tick();
      }
    } finally {
      this.looping = false;
    }
  }

  /** One PPO iteration under the NaN guard; posts stage, metrics, samples and ratios. */
  private async iterate(): Promise<void> {
    const { session, trainers, evals, stage, deps } = this.p;
    session.requireBackend();
    const trainer = await trainers.ensure();
    await evals.ifDue(trainer); // the SFT baseline, before the first iteration
    const snapshot = await trainers.guardNextIteration(trainer);
    let result: IterationResult;
    try {
      this.inFlight = true;
      // The last iteration of a budget samples no rollout ahead: no iteration follows it. Its trace
      // is captured when the start asked for it: one bigger readback, on that iteration only.
      const last = this.stopAt !== null && trainer.iter + 1 >= this.stopAt;
      result = await trainer.iteration({
        sampleNext: !last,
        capture: this.capture || (last && this.captureLast),
        lateCapture: () => this.capture || this.captureInFlight,
      });
    } catch (e) {
      if (await session.failedByLoss()) return; // the session reports it and recovers
      trainer.restoreDeviceSnapshot(snapshot);
      if (e instanceof RewardFunctionError) return this.pauseRewardFunction(trainer.iter + 1, e.problem);
      const nf = nonFiniteOfError(e);
      if (nf) return this.pauseNonFinite(trainer, nf);
      throw e;
    } finally {
      this.inFlight = false;
      this.captureInFlight = false;
    }
    if (session.lost) return;
    const nf = nonFiniteOfMetrics(result.iter, result.metrics);
    if (nf) {
      trainer.restoreDeviceSnapshot(snapshot);
      return this.pauseNonFinite(trainer, nf);
    }
    stage.set('idle');
    const { iter, metrics, samples, ratios } = result;
    deps.post({ type: 'metrics', iter, values: metrics });
    session.compileRest(); // the kernels the first iteration did not need, from now on
    deps.post({ type: 'samples', iter, rows: samples });
    const { clipLow, clipHigh, dualClip } = trainer.config; // what this update clipped with, for the page's clipping view
    deps.post({
      type: 'ratios',
      iter,
      ratios: ratios.ratios,
      advantages: ratios.advantages,
      seqRatios: ratios.seqRatios,
      seqAdvantages: ratios.seqAdvantages,
      clip: { clipLow, clipHigh, dualClip },
    });
    if (result.trace) {
      const { msg, transfer } = traceMessage(trainer.config.task, iter, result.trace, result.prompts ?? []);
      deps.post(msg, transfer);
    }
    // Always at the end of a budget: the point a preset's promise is measured at.
    await evals.ifDue(trainer, this.atBudgetEnd(trainer) && this.running);
  }

  /** The written reward function refused a sample: nothing of the iteration was applied; the user edits it and resumes. */
  private pauseRewardFunction(iter: number, problem: RewardFunctionProblem): void {
    this.running = false;
    this.p.deps.post({
      type: 'paused',
      reason: `the reward function was refused in iteration ${iter} (${problem.message}); nothing of that iteration was applied`,
      rewardFunction: { ...problem, iter },
    });
    this.p.stage.set('idle');
  }

  private pauseNonFinite(trainer: TrainerLike, nf: NonFinite): void {
    this.running = false;
    this.p.deps.post(nonFinitePause(nf, trainer.config));
    this.p.stage.set('idle');
  }

  private atBudgetEnd(trainer: TrainerLike): boolean {
    return this.stopAt !== null && trainer.iter >= this.stopAt;
  }

  /**
   * True (and the loop ends, telling the page) once the trainer has done the `untilIter` of the last
   * start. The end-of-budget evaluation runs first if a pause skipped it (the last iteration finished
   * while paused); the evaluator never scores the same iteration twice.
   */
  private async stopAtBudget(): Promise<boolean> {
    const trainer = this.p.trainers.current;
    if (!this.running || !trainer || !this.atBudgetEnd(trainer)) return false;
    await this.p.queue.run(() => this.p.evals.ifDue(trainer, true));
    if (!this.running || this.p.trainers.current !== trainer) return false;
    this.running = false;
    this.stopAt = null;
    this.captureLast = false;
    this.p.deps.post({ type: 'finished', iter: trainer.iter });
    return true;
  }
}
