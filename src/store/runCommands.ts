// The page's commands about the run: Start, Pause, Step, Reset, New comparison, and the warm-up
// that gets a trainer ready before the first Start. Each changes the store through its actions and
// sends the worker what it needs: the config only when the worker does not hold it (configSync.ts).
import type { StoreApi } from 'zustand';
import type { CheckedConfig } from '../rl/config.ts';
import type { PageToWorker } from '../worker/protocol.ts';
import type { AppState, RunStart } from './appStore.ts';
import type { Autosave } from './autosave.ts';
import type { ConfigSync } from './configSync.ts';
import { capturesHackAtEnd } from './hackedOffer.ts';
import type { MetricFeed } from './metricFeed.ts';
import { presetBudget } from './presetRun.ts';
import type { ReplyOf } from './requests.ts';
import { startBlockedBy } from './rewardFunctionSync.ts';
import type { RunControl } from './runFlows.ts';
import { warmUpSuppressed } from './testSwitches.ts';
import type { TrainerConnection } from './trainerConnection.ts';

export class RunCommands implements RunControl {
  /**
   * Set when a reset is sent, cleared by the worker's `resetDone` (or an error): an iteration in
   * flight at the click still reports, and its results belong to the run the user just closed.
   */
  discarding = false;

  constructor(
    private readonly store: StoreApi<AppState>,
    private readonly connection: TrainerConnection,
    private readonly feed: MetricFeed,
    private readonly config: ConfigSync,
    private readonly autosave: Autosave,
  ) {}

  private get s(): AppState {
    return this.store.getState();
  }

  private send(msg: PageToWorker): boolean {
    return this.connection.send(msg);
  }

  /**
   * Makes the trainer worker as the page opens, so its script loads while the page renders and the
   * self-test runs; the warm-up then only sends it work (TrainerConnection.preload). Not where the
   * warm-up is switched off: there a worker starts on the first command only.
   */
  preload(): void {
    if (!warmUpSuppressed()) this.connection.preload();
  }

  /**
   * Starts the trainer worker before the first Start (called once the WebGPU self-test passed), so
   * its device, the kernels' pipelines, the task's SFT checkpoint and the baseline evaluation are
   * ready by the time the user asks for an iteration. If it cannot initialise, it is dropped
   * without a message, and the next command starts a fresh one that reports why. The test switch
   * 'ppo-test-no-warm-up' (testSwitches.ts) leaves the worker to the first command.
   */
  warmUp(): void {
    if (!warmUpSuppressed()) {
      this.connection.ensure();
      this.config.prepareAhead();
    }
    this.config.watch();
  }

  /** Starts (or resumes) the active run; a run with a budget stops by itself when it is reached. */
  async start(start: RunStart = {}): Promise<void> {
    if (this.refusedByRewardFunction()) return;
    this.feed.flush();
    if (!this.beginIfNeeded(start)) return;
    this.feed.resetSpeed();
    const seq = this.s.sequence;
    if (seq?.stoppedBy) this.s.setSequence({ ...seq, stoppedBy: undefined });
    const untilIter = this.budgetTarget();
    // The reward-hacking β = 0 run keeps its last iteration for the inspector (hackedOffer.ts).
    const captureLast = untilIter !== undefined && capturesHackAtEnd(this.s.runs.find((r) => r.id === this.s.activeRunId));
    if (this.send({ type: 'start', untilIter, ...(captureLast ? { captureLast } : {}) })) {
      this.s.setRunState('running');
      this.s.setNotice(null);
    }
  }

  /**
   * Stops training at the next iteration boundary. The user's Pause (`captureInFlight`) also asks
   * the worker to capture the iteration it lets finish, so the Inspect tab has the paused state's
   * iteration without training one more; pauses the page makes for itself capture nothing.
   */
  async pause(opts: { captureInFlight?: boolean } = {}): Promise<void> {
    this.feed.resetSpeed();
    if (this.send(opts.captureInFlight ? { type: 'pause', captureInFlight: true } : { type: 'pause' })) {
      this.s.setRunState('paused');
      // Queued in the worker behind the iteration in flight: the state the run paused at.
      this.autosave.saveNow();
    }
  }

  /** The user's Start/Pause (Space). */
  async toggle(): Promise<void> {
    if (this.s.runState === 'running') await this.pause({ captureInFlight: true });
    else await this.start();
  }

  async step(): Promise<void> {
    if (this.refusedByRewardFunction()) return;
    if (!this.beginIfNeeded()) return;
    if (this.send({ type: 'step' })) this.s.setRunState('paused');
  }

  /** Ends the current run (kept in the list) and sends the worker back to fresh weights. */
  resetRun(): boolean {
    this.settleCharts();
    // The run ends at the click: starting the worker can take a while, and metrics that arrive
    // meanwhile belong to whatever runs next, not to the run the user just closed.
    this.s.endRun();
    // Only a worker that existed before can still be reporting on the old run (it answers resetDone).
    this.discarding = this.connection.exists;
    const sent = this.send({ type: 'reset' });
    if (!sent) this.discarding = false;
    return sent;
  }

  /** Ends the current run (it stays in the run list), stops a "Run both", and returns the trainer to fresh weights. */
  async reset(): Promise<void> {
    this.s.setSequence(null);
    if (this.resetRun()) this.s.setNotice(null);
    this.config.prepareAhead();
  }

  /** "New comparison": ends the current run (Reset) and takes every run off the charts; the runs begun next are drawn on their own. */
  newComparison(): void {
    void this.reset();
    this.s.newComparison();
  }

  settleCharts(): void {
    this.feed.flush();
    this.feed.resetSpeed();
  }

  stateLoaded(config: CheckedConfig): void {
    this.config.held(config);
    this.autosave.markSaved();
  }

  loadState(bytes: ArrayBuffer): Promise<ReplyOf['loadState']> {
    return this.connection.request('loadState', { bytes }, [bytes]);
  }

  /**
   * A new run begins on Start/Step when none is active: it snapshots the config it trains with (sent
   * to the worker if it does not hold it), and the budget of the preset that config still is.
   */
  private beginIfNeeded(start: RunStart = {}): boolean {
    const s = this.s;
    if (s.activeRunId) return true;
    if (!this.config.send(s.config)) return false;
    s.beginRun({ budget: presetBudget(s.config, s.preset, s.budgetOverride), preset: s.preset, ...start });
    return true;
  }

  /**
   * Where Start stops by itself: the active run's budget, as the trainer's total iteration count. In
   * "Run both" always (an arm whose last iteration finished while paused moves on to the next arm at
   * once); otherwise only while the run is short of it, so Start after the budget trains on past it.
   */
  private budgetTarget(): number | undefined {
    const { runs, activeRunId, sequence } = this.s;
    const run = runs.find((r) => r.id === activeRunId);
    if (!run?.budget) return undefined;
    return sequence || run.metrics.length < run.budget ? run.budget : undefined;
  }

  /** Start and Step wait while the reward function awaits the visitor's acceptance or failed its check; the notice says why. */
  private refusedByRewardFunction(): boolean {
    const why = startBlockedBy(this.s);
    if (why) this.s.setNotice({ tone: 'warn', text: why });
    return why !== null;
  }
}
