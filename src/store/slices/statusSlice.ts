// Where training stands: the WebGPU self-test, the trainer's run state and stage, its speed and
// kernel compilation, the notice shown, the offers after a reload or a lost device, and "Run both"
// in progress; with the actions that apply the worker's messages about them (paused, device lost /
// recovered / unavailable, error).
import type { StateCreator } from 'zustand';
import { type TrainerStage, USER_PAUSE_REASON, type WorkerToPage } from '../../worker/protocol.ts';
import * as notices from '../notices.ts';
import type { CpuOffer, GpuStatus, Notice, ResumeOffer, RunSequence, RunState, SequenceOffer } from '../statusTypes.ts';
import type { ConfigSlice } from './configSlice.ts';
import { shownBatch, type RunsSlice } from './runsSlice.ts';

export interface StatusSlice {
  gpu: GpuStatus;
  runState: RunState;
  stage: TrainerStage;
  trainerLabel: string | null;
  /** Iterations per second of the run training now, over its last few iterations; null when not measured. */
  speed: number | null;
  /** The trainer worker's kernel compilation (WebGPU): pipelines built of all; null before it reports. */
  compile: { done: number; total: number; seconds: number } | null;
  notice: Notice | null;
  /** Another tab of the page owns the saved runs (tabOwner.ts): this one writes nothing and does not train. */
  readOnlyTab: boolean;
  resume: ResumeOffer | null;
  cpuOffer: CpuOffer | null;
  sequence: RunSequence | null;
  sequenceOffer: SequenceOffer | null;

  setGpu(gpu: GpuStatus): void;
  setRunState(s: RunState): void;
  setStage(s: TrainerStage): void;
  setTrainerLabel(label: string | null): void;
  setSpeed(itPerSec: number | null): void;
  setCompile(c: StatusSlice['compile']): void;
  setNotice(n: Notice | null): void;
  setReadOnlyTab(readOnly: boolean): void;
  setResume(r: ResumeOffer | null): void;
  setCpuOffer(o: CpuOffer | null): void;
  setSequence(s: RunSequence | null): void;
  setSequenceOffer(o: SequenceOffer | null): void;
  /** The active run ends (it stays in the list) and the trainer is idle. */
  endRun(): void;

  /** The worker's `paused`: by the user, by the NaN guard (the last good state restored) or by a refused reward function. */
  pausedReported(msg: Extract<WorkerToPage, { type: 'paused' }>): void;
  /** The worker's `deviceLost`: it is getting a new device. */
  deviceLost(msg: Extract<WorkerToPage, { type: 'deviceLost' }>): void;
  /** The worker's `deviceRecovered`: the replayed iterations' first copies go, so each curve stays one line. */
  deviceRecovered(msg: Extract<WorkerToPage, { type: 'deviceRecovered' }>): void;
  /** The worker's `deviceUnavailable`: no device came back; the CPU backend is offered. */
  deviceUnavailable(msg: Extract<WorkerToPage, { type: 'deviceUnavailable' }>): void;
  /**
   * The worker's `error` (its loop stops on any): a run in progress pauses; in "Run both" the arm
   * is marked stopped, and the notice says after how many of its iterations (`done`).
   */
  trainerFailed(msg: Extract<WorkerToPage, { type: 'error' }>, done: number): void;
}

export const statusSlice: StateCreator<StatusSlice & RunsSlice & ConfigSlice, [], [], StatusSlice> = (set, get) => ({
  gpu: { kind: 'checking' },
  runState: 'idle',
  stage: 'idle',
  trainerLabel: null,
  speed: null,
  compile: null,
  notice: null,
  readOnlyTab: false,
  resume: null,
  cpuOffer: null,
  sequence: null,
  sequenceOffer: null,

  setGpu: (gpu) => set({ gpu }),
  setRunState: (runState) => set({ runState }),
  setStage: (stage) => set({ stage }),
  setTrainerLabel: (trainerLabel) => set({ trainerLabel }),
  setSpeed: (speed) => set({ speed }),
  setCompile: (compile) => set({ compile }),
  setNotice: (notice) => set({ notice }),
  setReadOnlyTab: (readOnlyTab) => set({ readOnlyTab }),
  setResume: (resume) => set({ resume }),
  setCpuOffer: (cpuOffer) => set({ cpuOffer }),
  setSequence: (sequence) => set({ sequence }),
  setSequenceOffer: (sequenceOffer) => set({ sequenceOffer }),
  endRun: () => set({ activeRunId: null, stage: 'idle', runState: 'idle', ...shownBatch({ ...get(), activeRunId: null }) }),

  pausedReported(msg) {
    set({ runState: 'paused', ...(msg.stage ? { stage: msg.stage } : {}) });
    if (msg.rewardFunction) {
      set({ rewardFailure: { ...msg.rewardFunction, source: get().config.rewardFunction }, notice: { tone: 'warn', text: notices.rewardFunctionPaused(msg.rewardFunction) } });
    } else if (msg.nonFinite) {
      set({ notice: { tone: 'warn', text: notices.nonFinitePaused(msg.nonFinite) } });
    } else {
      set({ notice: { tone: 'info', text: notices.paused(msg.reason), ...(msg.reason === USER_PAUSE_REASON ? { echo: true as const } : {}) } });
    }
  },
  deviceLost: (msg) => set({ notice: { tone: 'warn', text: notices.deviceLost(msg) } }),
  deviceRecovered(msg) {
    const active = get().activeRunId;
    if (active) get().truncateRun(active, msg.fromIter);
    set({ runState: msg.resumed ? 'running' : active ? 'paused' : 'idle', notice: { tone: 'info', text: notices.deviceRecovered(msg) } });
  },
  deviceUnavailable(msg) {
    set({
      runState: get().activeRunId ? 'paused' : 'idle',
      cpuOffer: { message: msg.message, iter: msg.iter },
      notice: { tone: 'error', text: notices.deviceUnavailable(msg) },
    });
  },
  trainerFailed(msg, done) {
    if (get().runState === 'running') set({ runState: 'paused' });
    const what = notices.trainerError(msg.message, msg.stage);
    const seq = get().sequence;
    if (!seq) {
      set({ notice: { tone: 'error', text: what } });
      return;
    }
    set({ sequence: { ...seq, stoppedBy: msg.message }, notice: { tone: 'error', text: notices.sequenceStopped(seq, done, what) } });
  },
});
