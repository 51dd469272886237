// A scripted stand-in for PpoTrainer implementing the whole trainer interface the worker uses, for
// tests of the worker's own logic (the trainer's maths has its own tests). Iteration k (the k-th)
// passes through the three stages, reports policy_loss = its number (NaN at `nanAt`; it throws at
// `throwAt` instead), and leaves the "weights" at k; evaluate() reports the iteration count it
// scored; every evaluation, restore and disposal is recorded, and so is each iteration's capture
// decision, taken where PpoTrainer takes it: `capture` at the start, `lateCapture` at the end of
// the update stage (its final readback).
import type { PpoConfig } from '../../src/rl/config.ts';
import type { IterationOptions, IterationResult, TrainerInit } from '../../src/rl/trainer.ts';
import { ITERATION_METRICS, type IterationMetrics } from '../../src/rl/metricNames.ts';
import type { TrainerLike } from '../../src/worker/hostDeps.ts';

/** Every metric an iteration reports, at 0 (the fake sets the few its tests read). */
const ZERO_METRICS = Object.fromEntries(ITERATION_METRICS.map((k) => [k, 0])) as IterationMetrics;

export interface FakeScript {
  /** Milliseconds spent in each stage. */
  ms?: number;
  /** The k-th iteration reports a NaN policy loss. */
  nanAt?: number;
  /** The k-th iteration throws. */
  throwAt?: number;
  /**
   * How results number iterations: 'index' from 0 as PpoTrainer does, 'count' by the iterations
   * done after it (from 1).
   */
  numbering?: 'index' | 'count';
}

interface FakeSnapshot {
  weights: number;
}

export class FakeTrainer implements TrainerLike {
  iter = 0;
  weights = 0;
  disposed = false;
  /** The weights of each state put back (device snapshot or full state). */
  restored: number[] = [];
  evalCalls: { iter: number; count: number; samples: number }[] = [];
  sampledAhead = 0;
  /** Whether each iteration, by its number k, would have been captured. */
  captured: { k: number; captured: boolean }[] = [];

  constructor(
    readonly init: TrainerInit,
    private readonly script: FakeScript = {},
  ) {}

  get config(): PpoConfig {
    return this.init.config;
  }

  async iteration(opts: IterationOptions = {}): Promise<IterationResult> {
    const k = this.iter + 1;
    for (const s of ['rollout', 'experience', 'update'] as const) {
      this.init.onStage?.(s);
      await new Promise((r) => setTimeout(r, this.script.ms ?? 1));
    }
    this.captured.push({ k, captured: opts.capture === true || opts.lateCapture?.() === true });
    if (k === this.script.throwAt) throw new Error('kernel exploded');
    this.weights = k;
    this.iter = k;
    const n = this.script.numbering === 'index' ? k - 1 : k;
    return {
      iter: n,
      metrics: { ...ZERO_METRICS, policy_loss: k === this.script.nanAt ? NaN : n, value_loss: 0.5, reward_mean: n / 10, actor_grad_norm: 1 },
      samples: [{ prompt: '1+1=', response: '2', reward: 1, endedWithEos: true, tokens: [] }],
      ratios: { ratios: [1, 1.1], advantages: [0.5, -0.5] },
    };
  }

  setConfig(c: PpoConfig): void {
    this.init.config = c;
  }

  async sampleAhead(): Promise<void> {
    this.sampledAhead++;
  }

  async evaluate(count: number, samples: number): Promise<Record<string, number>> {
    this.evalCalls.push({ iter: this.iter, count, samples });
    return { accuracy: this.iter / 100, greedy_accuracy: this.iter / 50 };
  }

  async actorCheckpoint(): Promise<Uint8Array> {
    return Uint8Array.from([7, this.weights]);
  }

  async saveState(): Promise<Uint8Array> {
    return new Uint8Array(Float64Array.of(this.weights).buffer);
  }

  async restoreState(state: Uint8Array): Promise<void> {
    this.putBack(new Float64Array(state.slice().buffer)[0]);
  }

  deviceSnapshot(): FakeSnapshot {
    return { weights: this.weights };
  }

  restoreDeviceSnapshot(s: unknown): void {
    this.putBack((s as FakeSnapshot).weights);
  }

  dispose(): void {
    this.disposed = true;
  }

  private putBack(weights: number): void {
    this.restored.push(weights);
    this.weights = weights;
    this.iter = weights;
  }
}
