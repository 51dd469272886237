// Capture of one iteration's trace (trace.ts) inside the trainer. During the update it keeps each
// minibatch step's new log-probs and new values on the device instead of freeing them; their
// readback joins the iteration's one final readback as named fields (captureTensors), so an
// inspected iteration waits on the device no more often than any other, and an iteration nobody
// inspects reads nothing more. The rest of the trace is already on the host: the rollout batch,
// the scores, and the experience and step statistics every iteration reads.
import type { Tensor } from '../../backend/tensor.ts';
import type { PpoConfig } from '../config.ts';
import type { Experience } from '../experience.ts';
import { actionMaskOf, type RolloutBatch } from '../rollout.ts';
import { knobsFromConfig, minibatchStatsOf, type IterationTrace, type MinibatchTrace } from './trace.ts';

/** One minibatch step as kept on the device until the final readback. */
interface KeptStep {
  epoch: number;
  index: number;
  rows: Int32Array;
  logprobs: Tensor; // (n, A)
  values: Tensor | null; // (n, A)
}

/** The trace's device tensors as the final readback names them (all null without a capture). */
export interface CaptureTensors {
  traceLogprobs: Tensor[] | null;
  traceValues: Tensor[] | null;
  traceTis: Tensor | null;
  /** The rejection-sampled mask the update used (null without rejection). */
  traceRsMask: Tensor | null;
  /** π_rollout as the device holds it (the host batch's copy is float32 on every backend). */
  traceRollout: Tensor | null;
}

type Host = Float64Array;

/** What the final readback gave that the trace takes: CaptureTensors read, the experience, each step's statistics. */
export interface CaptureHost {
  traceLogprobs: Host[] | null;
  traceValues: Host[] | null;
  traceTis: Host | null;
  traceRsMask: Host | null;
  traceRollout: Host | null;
  kl: Host;
  rewards: Host;
  advantages: Host;
  returns: Host;
  values: Host;
  refLogprobs: Host;
  oldLogprobs: Host;
  /** Each step's statistics in step order: POLICY_STATS (4), VALUE_STATS (2) with a critic, KL loss (1) with it on. */
  policy: Host[];
  value: Host[];
  klLoss: Host[];
}

/** The iteration the trace is of. */
export interface CaptureInputs {
  iter: number;
  cfg: PpoConfig;
  /** The KL controller's β at this iteration (before its update). */
  beta: number;
  r: RolloutBatch;
  scores: ArrayLike<number>;
  /** (B) ReMax's greedy-reward baselines; null for the other estimators. */
  baselines?: ArrayLike<number> | null;
  host: CaptureHost;
}

export class TraceCapture {
  private readonly steps: KeptStep[] = [];

  /** Keeps one step's tensors; the caller must not free them before the final readback. */
  keep(epoch: number, index: number, rows: Int32Array, logprobs: Tensor, values: Tensor | null): void {
    this.steps.push({ epoch, index, rows, logprobs, values });
  }

  tensors(exp: Experience): CaptureTensors {
    return {
      traceLogprobs: this.steps.map((s) => s.logprobs),
      traceValues: this.steps.flatMap((s) => (s.values ? [s.values] : [])),
      traceTis: exp.tisWeights,
      traceRsMask: exp.rsMask,
      traceRollout: exp.rolloutLogprobs,
    };
  }

  /**
   * The iteration's trace from the final readback. Its arrays are copies, owned by the trace alone,
   * so the worker can transfer their buffers.
   */
  build(x: CaptureInputs): IterationTrace {
    const { r, host: h } = x;
    const { B, P, A } = r;
    const S = P + A;
    const responseTokens = new Int32Array(B * A);
    const promptTokens = new Int32Array(B * P);
    const promptMask = new Float64Array(B * P);
    for (let b = 0; b < B; b++) {
      responseTokens.set(r.sequences.subarray(b * S + P, b * S + S), b * A);
      promptTokens.set(r.sequences.subarray(b * S, b * S + P), b * P);
      promptMask.set(r.attnMask.subarray(b * S, b * S + P), b * P);
    }
    const logprobs = h.traceLogprobs ?? [];
    const values = h.traceValues ?? [];
    let v = 0;
    const minibatches = this.steps.map((s, j): MinibatchTrace => {
      const newValues = s.values ? values[v++] : null;
      return {
        epoch: s.epoch,
        index: s.index,
        rows: Int32Array.from(s.rows),
        newLogprobs: logprobs[j],
        newValues,
        stored: minibatchStatsOf(h.policy[j], newValues ? h.value[j] : null, h.klLoss[j]?.[0] ?? null),
      };
    });
    return {
      iter: x.iter,
      B,
      A,
      knobs: knobsFromConfig(x.cfg, x.beta),
      responseTokens,
      promptTokens,
      promptMask,
      actionMask: Float64Array.from(actionMaskOf(r)),
      group: Int32Array.from(r.group),
      scores: Float64Array.from(x.scores),
      ...(x.baselines ? { baselines: Float64Array.from(x.baselines) } : {}),
      rolloutLogprobs: h.traceRollout ?? (r.logprobs ? Float64Array.from(r.logprobs) : null),
      oldLogprobs: h.oldLogprobs.slice(),
      refLogprobs: h.refLogprobs.slice(),
      values: h.values.slice(),
      stored: { kl: h.kl.slice(), rewards: h.rewards.slice(), advantages: h.advantages.slice(), returns: h.returns.slice(), tisWeights: h.traceTis, rsMask: h.traceRsMask },
      minibatches,
    };
  }
}

/** The final readback's capture fields: null throughout when the iteration is not captured. */
export function captureTensors(c: TraceCapture | null, exp: Experience): CaptureTensors {
  return c ? c.tensors(exp) : { traceLogprobs: null, traceValues: null, traceTis: null, traceRsMask: null, traceRollout: null };
}
