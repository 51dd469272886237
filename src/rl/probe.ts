// What the page and the benchmarks see of an iteration, kept out of the algorithm: the stage
// hooks (onRecord when the host starts recording a stage's work, onStage when the device gets to
// it), wall-clock marks per stage, and the device counters' deltas.
import type { Backend } from '../backend/backend.ts';
import type { IterationMetrics } from './metricNames.ts';
import type { Stage } from './nonFinite.ts';

export interface StageHooks {
  onStage: (s: Stage) => void;
  onRecord: (s: Stage) => void;
}

/** Hands out one IterationProbe per iteration; a stage still pending from an ended one is never announced. */
export class Probe {
  /** Changes when an iteration starts or ends: announcements from the device check it. */
  private epoch = 0;

  constructor(
    private readonly be: Backend,
    private readonly hooks: StageHooks,
  ) {}

  async around<T>(run: (probe: IterationProbe) => Promise<T>): Promise<T> {
    const epoch = ++this.epoch;
    try {
      return await run(new IterationProbe(this.be, this.hooks, () => this.epoch === epoch));
    } finally {
      this.epoch++;
    }
  }
}

export class IterationProbe {
  private readonly c0: { dispatches: number; submits: number; readbacks: number };
  private readonly t0 = performance.now();
  private t1 = 0;
  private t2 = 0;
  private t3 = 0;
  private pending: Promise<void>[] = [];
  /** Seconds spent recording the next iteration's rollout (inside the update's span). */
  nextRolloutSeconds = 0;

  constructor(
    private readonly be: Backend,
    private readonly hooks: StageHooks,
    private readonly current: () => boolean,
  ) {
    this.c0 = { ...be.counters() };
  }

  rollout(): void {
    this.enter('rollout');
  }

  experience(): void {
    this.t1 = performance.now();
    this.enter('experience');
  }

  /**
   * The update records now. The device starts on the experience meanwhile, and the pipeline view
   * moves to "update" when it is done; not when the iteration waited for its own rollout: that
   * readback was a submit already, and an iteration keeps to 3.
   */
  update(rolloutWasAhead: boolean): void {
    this.t2 = performance.now();
    if (rolloutWasAhead) this.showWhenDone('update');
    this.hooks.onRecord('update');
    if (!rolloutWasAhead) this.hooks.onStage('update');
  }

  /**
   * Records the next iteration's rollout: the update goes to the device first (on the CPU backend
   * it has already run), so the pipeline view switches to the rollout when the device does.
   */
  nextRollout<T>(record: () => T): T {
    const t = performance.now();
    this.showWhenDone('rollout');
    this.hooks.onRecord('rollout');
    const out = record();
    this.hooks.onRecord('update'); // the final wait
    this.nextRolloutSeconds = (performance.now() - t) / 1000;
    return out;
  }

  /** After the final readback: the announcements it settled have been made. */
  async done(): Promise<void> {
    await Promise.all(this.pending);
    this.t3 = performance.now();
  }

  /**
   * Stage times and device counts. `aheadSeconds`: recording this iteration's rollout, sampled
   * ahead, took that long in the previous iteration (its computation on the CPU backend); it moves
   * from that iteration's update time to this one's rollout time. On WebGPU the device time of
   * both is in the final readback's wait, counted in time_update_s.
   */
  metrics(aheadSeconds: number): Pick<IterationMetrics, 'time_rollout_s' | 'time_experience_s' | 'time_update_s' | 'gpu_submits' | 'gpu_readbacks' | 'gpu_dispatches'> {
    const c1 = this.be.counters();
    return {
      time_rollout_s: aheadSeconds + (this.t1 - this.t0) / 1000,
      time_experience_s: (this.t2 - this.t1) / 1000,
      time_update_s: (this.t3 - this.t2) / 1000 - this.nextRolloutSeconds,
      gpu_submits: c1.submits - this.c0.submits,
      gpu_readbacks: c1.readbacks - this.c0.readbacks,
      gpu_dispatches: c1.dispatches - this.c0.dispatches,
    };
  }

  /** A stage that begins now for both hooks: its work is recorded (and, on the CPU backend, run) from here. */
  private enter(s: Stage): void {
    this.hooks.onRecord(s);
    this.hooks.onStage(s);
  }

  /** `onStage(s)` once the device has done the work submitted so far, if the iteration is still running. */
  private showWhenDone(s: Stage): void {
    const done = this.be.flushThen(() => {
      if (this.current()) this.hooks.onStage(s);
    });
    // A failed iteration never awaits it: its rejection (a lost device) must not go unhandled.
    done.catch(() => {});
    this.pending.push(done);
  }
}
