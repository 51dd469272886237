// What one iteration does beside the algorithm, in one object: the probe (stage hooks, timings,
// device counters: probe.ts), the inspector's capture (inspect/capture.ts) and the device tensors
// the iteration makes, held until it ends and freed then. PpoTrainer.runIteration reads as the
// algorithm with these calls at its stage boundaries.
import type { Backend } from '../backend/backend.ts';
import type { Tensor } from '../backend/tensor.ts';
import type { Experience } from './experience.ts';
import { captureTensors, TraceCapture, type CaptureHost, type CaptureInputs, type CaptureTensors } from './inspect/capture.ts';
import type { IterationTrace } from './inspect/trace.ts';
import type { IterationProbe } from './probe.ts';
import { readNamed } from './readNamed.ts';

/** When an iteration captures its trace for the inspector (IterationOptions' fields of the same names). */
export interface CaptureWish {
  capture?: boolean;
  lateCapture?: () => boolean;
}

export class IterationHooks {
  /** Each update step's new log-probs and values, kept for a capture (null when none can be asked for). */
  readonly kept: TraceCapture | null;
  /** The trace was read with the final readback. */
  private captured = false;

  constructor(
    readonly probe: IterationProbe,
    private readonly wish: CaptureWish,
    /** Device tensors the iteration made; the caller frees them when it ends, whether it completed or threw. */
    readonly held: Tensor[],
  ) {
    this.kept = wish.capture || wish.lateCapture ? new TraceCapture() : null;
  }

  /**
   * The trace's tensors for the final readback, when a capture is asked for by then (a pause that
   * came in while the iteration ran counts); none otherwise.
   */
  readbackTensors(exp: Experience): CaptureTensors {
    this.captured = this.wish.capture === true || this.wish.lateCapture?.() === true;
    return captureTensors(this.captured ? this.kept : null, exp);
  }

  /**
   * The iteration's trace, when one was asked for: from the final readback, or, asked for only
   * once that had resolved, from one readback more of the tensors still held.
   */
  async trace(be: Backend, exp: Experience, host: CaptureHost, inputs: Omit<CaptureInputs, 'host'>): Promise<IterationTrace | undefined> {
    if (!this.kept) return undefined;
    const late = !this.captured && this.wish.lateCapture?.() === true;
    if (!this.captured && !late) return undefined;
    const traceHost = late ? { ...host, ...(await readNamed(be, { ...captureTensors(this.kept, exp) })) } : host;
    return this.kept.build({ ...inputs, host: traceHost });
  }
}
