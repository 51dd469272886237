// The inspector's state: the iteration traces the worker captured, newest last, and whether the
// page wants the next iterations captured. A trace costs extra device reads, so the worker makes
// one only while `capture` is on (the inspector or the clipping view is open, or "Step and inspect"
// was pressed), and of the iteration a user's Pause lets finish (TrainerClient.pause).
import { create } from 'zustand';
import type { IterationTrace } from '../rl/inspect/trace.ts';
import type { WorkerToPage } from '../worker/protocol.ts';
import { hackedOfferFor, type HackedOffer } from './hackedOffer.ts';
import type { RunRecord } from './runs.ts';

/** Traces kept per run: the inspector can pick one of the last few iterations. */
export const TRACES_KEPT = 5;

/** The run id of the own-model run's traces (one run at a time: a fresh run or another model drops them). */
export const OWN_MODEL_RUN_ID = 'own-model';
/** The run id of a run file's own-model trace shown as recorded (one at a time), apart from the live run's. */
export const OWN_MODEL_RECORDED_ID = 'own-model-recorded';

/** A captured iteration with the run it belongs to and the prompts and tokens as text. */
export interface CapturedTrace {
  runId: string;
  /** The model's label, for a trace of an own-model run (OWN_MODEL_RUN_ID, OWN_MODEL_RECORDED_ID). */
  model?: string;
  /** The run file a recorded own-model trace came from (OWN_MODEL_RECORDED_ID). */
  file?: string;
  trace: IterationTrace;
  prompts: string[]; // (B) prompt text of each response
  tokenText: string[]; // (B·A) each response token as text ('' for padding)
  /** (B) whether each response ended with an EOS token; absent where the trace's source did not say. */
  endedWithEos?: boolean[];
}

export type { HackedOffer } from './hackedOffer.ts';

/** The worker's `hfTrace`, or a kept run's trace shown again (a file made before the EOS flags has none). */
export type OwnModelTraceMessage = Omit<Extract<WorkerToPage, { type: 'hfTrace' }>, 'endedWithEos'> & { endedWithEos?: boolean[] };

/** What the inspector is asked to open: a response, and optionally one of its tokens in one update step. */
export type InspectFocus = HackedOffer & { t?: number; step?: number };

export interface InspectionState {
  traces: CapturedTrace[];
  /** The worker captures a trace of each iteration while this is on. */
  capture: boolean;
  /** The reward-hacking run's last iteration, captured at its end, with the hacked response (hackedOffer.ts). */
  hacked: HackedOffer | null;
  /**
   * The response (and token `t`, with the update step whose clip badge to show) the inspector is
   * asked to show; `n` counts requests, so asking again re-selects it.
   */
  focus: (InspectFocus & { n: number }) | null;
  setCapture(on: boolean): void;
  pushTrace(t: CapturedTrace): void;
  setHacked(h: HackedOffer | null): void;
  focusOn(h: InspectFocus): void;
  /** Drops the traces of a run (its reset or deletion). */
  dropRun(runId: string): void;
  /** Drops run `runId`'s traces from iteration `fromIter` on (replayed after a device loss, they come again). */
  truncateRun(runId: string, fromIter: number): void;
  /**
   * The worker's `trace` of an iteration of `run` (the active one): kept with it, and the hacked
   * response offered when it is the reward-hacking run's last; a trace whose arrays disagree with
   * its shape is dropped.
   */
  traceReceived(msg: Extract<WorkerToPage, { type: 'trace' }>, run: RunRecord | undefined): void;
  /** An iteration of the own-model run on `model`: kept in place of an earlier trace of that iteration (replayed after a lost device). */
  ownModelTraceReceived(msg: OwnModelTraceMessage, model: string): void;
  /** Model `model` is open: the own-model run's traces of that model stay (it came back after a lost device), any other model's go. */
  ownModelOpened(model: string): void;
  /** A run file's own-model trace, shown as recorded in place of any shown before; the live run's traces stay as they are. */
  recordedTraceShown(t: Pick<CapturedTrace, 'trace' | 'prompts' | 'tokenText' | 'endedWithEos'>, model: string, file: string): void;
}

export const useInspection = create<InspectionState>()((set, get) => ({
  traces: [],
  capture: false,
  hacked: null,
  focus: null,
  setCapture: (on) => set({ capture: on }),
  setHacked: (hacked) => set({ hacked }),
  focusOn: (h) => set((s) => ({ focus: { ...h, n: (s.focus?.n ?? 0) + 1 } })),
  pushTrace: (t) =>
    set((s) => {
      const sameRun = s.traces.filter((x) => x.runId === t.runId);
      const others = s.traces.filter((x) => x.runId !== t.runId);
      return { traces: [...others, ...sameRun.slice(-(TRACES_KEPT - 1)), t] };
    }),
  dropRun: (runId) =>
    set((s) => ({
      traces: s.traces.filter((x) => x.runId !== runId),
      hacked: s.hacked?.runId === runId ? null : s.hacked,
      focus: s.focus?.runId === runId ? null : s.focus,
    })),
  truncateRun: (runId, fromIter) => set((s) => ({ traces: s.traces.filter((t) => t.runId !== runId || t.trace.iter < fromIter) })),
  traceReceived(msg, run) {
    const { trace, prompts, tokenText } = msg;
    if (!run || !trace || prompts?.length !== trace.B || tokenText?.length !== trace.B * trace.A) return;
    get().pushTrace({ runId: run.id, trace, prompts, tokenText });
    const offer = hackedOfferFor(run, trace);
    if (offer) set({ hacked: offer });
  },
  ownModelTraceReceived(msg, model) {
    const { trace, prompts, tokenText, endedWithEos } = msg;
    if (!trace || prompts?.length !== trace.B || tokenText?.length !== trace.B * trace.A || (endedWithEos && endedWithEos.length !== trace.B)) return;
    set((s) => ({ traces: s.traces.filter((x) => x.runId !== OWN_MODEL_RUN_ID || x.trace.iter !== trace.iter) }));
    get().pushTrace({ runId: OWN_MODEL_RUN_ID, model, trace, prompts, tokenText, ...(endedWithEos ? { endedWithEos } : {}) });
  },
  ownModelOpened: (model) => set((s) => ({ traces: s.traces.filter((c) => c.runId !== OWN_MODEL_RUN_ID || c.model === model) })),
  recordedTraceShown(t, model, file) {
    set((s) => ({ traces: [...s.traces.filter((x) => x.runId !== OWN_MODEL_RECORDED_ID), { runId: OWN_MODEL_RECORDED_ID, model, file, ...t }] }));
  },
}));
