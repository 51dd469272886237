// The shapes of where training stands (statusSlice.ts): the WebGPU self-test's outcome, the run
// state, the notice, "Run both" in progress and the offers after a reload or a lost device.
import type { CheckedConfig } from '../rl/config.ts';
import type { SelftestResult } from '../worker/protocol.ts';

export type GpuStatus =
  | { kind: 'checking' }
  | { kind: 'ready'; result: Extract<SelftestResult, { type: 'selftest-ok' }> }
  | {
      kind: 'unavailable';
      reason: Extract<SelftestResult, { type: 'selftest-unavailable' }>['reason'];
      message: string;
      /** For 'limit-too-small': each WebGPU limit the adapter lacks, with the needed and offered values. */
      shortfalls?: NonNullable<Extract<SelftestResult, { type: 'selftest-unavailable' }>['shortfalls']>;
      /** For 'device-failed': the browser's words for why. */
      browserError?: string;
    }
  | { kind: 'error'; message: string };

export type RunState = 'idle' | 'running' | 'paused';

/** "Run both": the arms of a paired preset, trained one after the other, each as its own run. */
export interface RunSequence {
  preset: string;
  arms: { label: string; config: CheckedConfig }[];
  /** The arm training now (or paused). */
  index: number;
  /** Iterations per arm. */
  budget: number;
  /** The run of the arm at `index`, once it has begun. */
  runId?: string;
  /** Why the arm in progress stopped, when a trainer error stopped it (Start retries it). */
  stoppedBy?: string;
  /** The comparison its runs are drawn in (comparisons.ts); absent in sequences saved before comparisons. */
  comparison?: number;
}

/** After a reload: a "Run both" the page left unfinished, and whether its arm in progress can resume. */
export interface SequenceOffer {
  seq: RunSequence;
  /** Iterations the arm in progress had trained; its saved state's iteration when `resumable`. */
  done: number;
  /** A trainer state of the arm's run is kept: it goes on from there rather than from the start. */
  resumable: boolean;
}

/** What the page offers after a reload: the saved trainer state of a run (the bytes stay in IndexedDB). */
export interface ResumeOffer {
  runId: string;
  runName: string;
  /** Training continues with iteration `iter` (that many are done). */
  iter: number;
  savedAt: number;
  wasRunning: boolean;
}

/** After a lost GPU device that did not come back: continue on the CPU backend (from `iter` when a state is saved). */
export interface CpuOffer {
  message: string;
  iter: number | null;
}

export interface Notice {
  tone: 'info' | 'warn' | 'error';
  text: string;
  /** Confirms what the live region has said already (the user's own Pause): shown, not announced again. */
  echo?: true;
}
