// The typed message protocol between the page (main thread, draws only) and the trainer Web
// Worker (does all GPU work). Both sides import these types; every message is a plain
// structured-clonable object tagged by `type`. ArrayBuffers in `bytes` fields are transferred.
import type { CheckedConfig, PpoConfig } from '../rl/config.ts';
import type { MetricValues } from '../rl/metricNames.ts';
import type { RewardFunctionProblem } from '../rl/rewardFunction/problem.ts';
import type { ModelDims, SftMeta } from '../rl/sftRun.ts';
import type { IterationTrace } from '../rl/inspect/trace.ts';
import type { SampleRow } from '../rl/samples.ts';
import type { AboutGpu, GpuUnavailableReason } from '../gpu/device.ts';
import type { LimitShortfall } from '../gpu/limits.ts';

// The page reads these through the protocol (it never imports the gpu layer, not even for types).
export type { AboutGpu } from '../gpu/device.ts';
export type { LimitRow, LimitShortfall } from '../gpu/limits.ts';
import type { KnobAdvice } from './nanAdvice.ts';
import type { HfAdapterInfo, HfTrainEval, HfTrainRow, HfTrainSettings } from '../rl/hf/hfTrainSettings.ts';
import type { HfGenerateRequest, HfModelSummary, HfSample } from './hfTypes.ts';

export type { HfGenerateRequest, HfModelSummary, HfSample, HfSampleToken } from './hfTypes.ts';

export type { KnobAdvice } from './nanAdvice.ts';

/** The `paused` reason of the user's own Pause (the page said "Training paused." already). */
export const USER_PAUSE_REASON = 'paused by the user';

export type BackendChoice = 'webgpu' | 'cpu';

/** Which phase of a PPO iteration the trainer is in (drives the pipeline diagram). */
export type TrainerStage = 'idle' | 'rollout' | 'experience' | 'update';

/** Which network a checkpoint is for. */
export type CheckpointRole = 'actor' | 'critic' | 'reference' | 'reward';

// ───────────────────────────── page → worker ─────────────────────────────

export type PageToWorker =
  /** `testHooks` turns on the debug* messages (the page sets it only from localStorage, never from a link). */
  | { type: 'init'; backend: BackendChoice; testHooks?: boolean }
  /** `task`: the task an actor is for (default the current config's); actors are kept per task. */
  | { type: 'loadCheckpoint'; role: CheckpointRole; bytes: ArrayBuffer; task?: string }
  /** The page only sends configs that passed validateConfig. */
  | { type: 'setConfig'; config: PpoConfig }
  /**
   * Train until paused; with `untilIter` (a preset's budget), stop by itself once the trainer has
   * done that many iterations in all, saying `finished` (at once when it already has). A total, not
   * a count of more iterations: an iteration that completes between a pause and the next start, or
   * one replayed after a device loss, can never push a run past its budget or leave it without one.
   */
  | {
      type: 'start';
      untilIter?: number;
      /**
       * Capture the trace of the budget's last iteration (the one that reaches `untilIter`) even
       * with capture off: the page offers it in the inspector once the run ends (a reward hack).
       */
      captureLast?: boolean;
    }
  /**
   * Stop at the next iteration boundary. With `captureInFlight` (the user's Pause), the iteration
   * in flight is captured for the inspector if it is still early enough (RunLoop.pause).
   */
  | { type: 'pause'; captureInFlight?: boolean }
  /** Exactly one PPO iteration, then pause. */
  | { type: 'step' }
  /** Back to the initial weights of the current config and seed. */
  | { type: 'reset' }
  /**
   * Whether the following iterations (of the run loop, or a `step`) capture their trace for the
   * inspector, each answered by a `trace` message. Takes effect at the next iteration.
   */
  | { type: 'setCapture'; on: boolean }
  /**
   * Before Start, while the user reads: build the trainer for the current config and evaluate the
   * SFT model on held-out prompts, so Start goes straight to the first iteration. Skipped when a
   * newer prepare came in, when training, or when the trainer has iterated. Posts nothing.
   */
  | { type: 'prepare' }
  /**
   * Ask for a checkpoint of the current state (answered by a `snapshot` message). This command and
   * the next three carry a `requestId` that their answer echoes, whether the reply named or an
   * `error` reporting the command's failure.
   */
  | { type: 'snapshot'; requestId: number }
  /**
   * Ask for the trainer's full state (answered by `state`): weights, optimisers, KL controller,
   * counter. With `quiet`, a worker with no trainer (or a lost device) answers nothing instead of
   * an error: the page's automatic saves.
   */
  | { type: 'saveState'; requestId: number; quiet?: boolean }
  /** Resume from a full state (a `state` message's bytes, e.g. after a reload); answered by `stateLoaded`. */
  | { type: 'loadState'; requestId: number; bytes: ArrayBuffer }
  /**
   * Human feedback: fine-tune the reward model on pairs a person labelled in the page (chosen =
   * the response they preferred). Answered by `rewardModelTrained`, or `error`.
   */
  | { type: 'trainRewardModel'; requestId: number; pairs: LabelledPair[] }
  /**
   * SFT in the tab: trains a fresh actor of `dims` through the current task's recipe from the
   * current seed (src/rl/sftRun.ts, as `npm run pretrain`), posting `sftProgress` and
   * `sftPhaseEval`; answered by `sftDone`, whose model then is the actor (as a loaded checkpoint).
   * `phaseSteps` caps each phase (a reduced run).
   */
  | { type: 'trainSft'; requestId: number; dims: ModelDims; phaseSteps?: number }
  /** Ends a `trainSft` in progress before its next step (it answers `sftDone` with `cancelled`). Not queued. */
  | { type: 'cancelSft' }
  /** Measures seconds per SFT step at `dims` on this device (a few steps); answered by `sftTimed`. */
  | { type: 'timeSft'; requestId: number; dims: ModelDims }
  /** Forgets the actor the page loaded or trained for `task`: its next trainer starts from the shipped checkpoint. */
  | { type: 'useShippedActor'; task: string }
  /**
   * Your own model: the files at the top of a folder the visitor picked (File objects: read here,
   * in the worker, range by range). Opened, checked against the memory plan and uploaded, posting
   * `hfProgress`; answered by `hfOpened` (with the model's summary, or the refusal naming the file
   * or field). The model replaces any earlier one; the PPO trainer is not touched.
   */
  | { type: 'hfOpen'; requestId: number; label: string; files: File[] }
  /** A response of the opened model to one prompt; answered by `hfGenerated`. */
  | ({ type: 'hfGenerate'; requestId: number } & HfGenerateRequest)
  /** Frees the opened model's GPU memory (the page forgot it). */
  | { type: 'hfClose' }
  /**
   * Trains the opened model with LoRA (GRPO or PPO with a critic), posting `hfTrainRow` per
   * iteration and `hfTrainEval` (the task's greedy held-out accuracy); answered by `hfTrained`.
   * `rewardFunction` is the page's written reward function (used when settings.reward is 'function').
   */
  | { type: 'hfTrain'; requestId: number; settings: HfTrainSettings; rewardFunction: string; resume?: { fromIter: number } }
  /**
   * A PEFT adapter (its two files) put on the opened model as the actor, with `state` the run's
   * training state (moments, critic: trainingState.ts) when it continues; answered by `hfAdapterLoaded`.
   */
  | { type: 'hfLoadAdapter'; requestId: number; config: string; weights: Uint8Array; state?: Uint8Array }
  /** Ends an `hfTrain` in progress before its next iteration (it answers `hfTrained` with `stopped`). Not queued. */
  | { type: 'hfTrainStop' }
  /** The trained actor's adapter as PEFT saves it, with `trainingState` the run's training state too; answered by `hfAdapter`. */
  | { type: 'hfExportAdapter'; requestId: number; trainingState?: boolean }
  /**
   * Test hook (refused unless init had testHooks): destroys the WebGPU device now, mid-iteration if
   * one is in flight; with `failReacquire`, the recovery's new adapter request fails as if no GPU came back.
   */
  | { type: 'debugDestroyDevice'; failReacquire?: boolean }
  /**
   * Test hook (refused unless init had testHooks): sets the live trainer's actor learning rate past
   * validateConfig's range (which stops at 1), to force a real blow-up.
   */
  | { type: 'debugSetActorLr'; actorLr: number };

/** One human label: two responses to the same prompt, the preferred one first. */
export interface LabelledPair {
  prompt: string;
  chosen: string;
  rejected: string;
}

// ───────────────────────────── worker → page ─────────────────────────────

/** The metric names every iteration reports (src/rl/metricNames.ts: the one vocabulary of trainer, store, charts and exports). */
export { ITERATION_METRICS as METRIC_NAMES, type MetricName, type MetricValues } from '../rl/metricNames.ts';

// Row types the trainer produces live in src/rl (the trainer must not import the worker).
export type { SampleRow, SampleToken } from '../rl/samples.ts';

export type WorkerToPage =
  | { type: 'ready'; adapter: string; backendLabel: string }
  /** Kernel pipelines built so far (WebGPU): `done` of `total`, `seconds` since compilation began. */
  | { type: 'compiling'; done: number; total: number; seconds: number }
  | { type: 'stage'; stage: TrainerStage }
  | { type: 'metrics'; iter: number; values: MetricValues & Record<string, number> }
  | { type: 'samples'; iter: number; rows: SampleRow[] }
  /**
   * Held-out evaluation after `iter` completed iterations (0 = the SFT model before training): the
   * task's metrics on prompts never trained on, sampled (`accuracy`, …) and greedy (`greedy_…`).
   */
  | { type: 'eval'; iter: number; values: Record<string, number>; prompts: number; seconds: number }
  /** Reply to `reset`: every message before it belongs to the run that was reset. */
  | { type: 'resetDone' }
  /** The loop stopped by itself at the `untilIter` of the last `start`; `iter` = iterations the trainer has done. */
  | { type: 'finished'; iter: number }
  /**
   * Per-token ratios and advantages (action tokens only) of the latest update, for the clipping
   * view; seqRatios / seqAdvantages are its GSPO sequence ratios with each sequence's mean advantage;
   * `clip`: the ε_low / ε_high / dual clip c the update ran with (the page falls back to the run's config).
   */
  | {
      type: 'ratios';
      iter: number;
      ratios: number[];
      advantages: number[];
      seqRatios?: number[];
      seqAdvantages?: number[];
      clip?: { clipLow: number; clipHigh: number; dualClip: number | null };
    }
  /** A captured iteration (setCapture): its trace, prompt text (B) and each response token as text (B·A, '' for padding). */
  | { type: 'trace'; iter: number; trace: IterationTrace; prompts: string[]; tokenText: string[] }
  /**
   * `nonFinite`: the pause is the NaN/Inf guard's (the state from before iteration `iter` was
   * restored). `rewardFunction`: the written reward function was refused on a sample of iteration
   * `iter`, which was abandoned before any weight moved.
   */
  | { type: 'paused'; reason: string; stage?: TrainerStage; nonFinite?: NonFiniteReport; rewardFunction?: RewardFunctionReport }
  /**
   * The check of a written reward function when a config with Reward source = function arrives:
   * compiled and called once on a sample of the task. `source` is the function checked.
   */
  | { type: 'rewardFunctionChecked'; source: string; score?: number; problem?: RewardFunctionProblem }
  /** `requestId`: the command whose failure this reports, when it answers one. */
  | { type: 'error'; message: string; stage?: TrainerStage; requestId?: number }
  | { type: 'snapshot'; requestId?: number; bytes: ArrayBuffer }
  /** The trainer's full state as one safetensors file (src/rl/trainerState.ts), after `iter` iterations. */
  | { type: 'state'; requestId?: number; iter: number; bytes: ArrayBuffer }
  /** A `loadState` succeeded: training continues from iteration `iter` with `config`. */
  /** `config`: the state file's, checked where the file entered (decodeTrainerState). */
  | { type: 'stateLoaded'; requestId?: number; iter: number; config: CheckedConfig }
  /** Reply to `trainRewardModel`: how many pairs it trained on and its accuracy on them afterwards (and before). */
  | { type: 'rewardModelTrained'; requestId?: number; pairs: number; accuracy: number; accuracyBefore?: number }
  /** A `trainSft` run's progress, posted as its loss is read (about ten times a phase); `seconds` since it began. */
  | { type: 'sftProgress'; requestId?: number; phase: number; phases: number; doneSteps: number; totalSteps: number; loss: number; seconds: number }
  /** Greedy held-out metrics of the model a phase left (task.evaluate), as `npm run pretrain` prints them. */
  | { type: 'sftPhaseEval'; requestId?: number; phase: number; label: string; metrics: Record<string, number> }
  /** Reply to `trainSft`: the model (safetensors) and what it is, or `cancelled`. */
  | { type: 'sftDone'; requestId?: number; bytes?: ArrayBuffer; meta?: SftMeta; cancelled?: boolean; seconds: number }
  /** Reply to `timeSft`: the measured step time and the steps of the task's whole recipe. */
  | { type: 'sftTimed'; requestId?: number; dims: ModelDims; secondsPerStep: number; recipeSteps: number }
  /** `hfOpen` reading and uploading the weights: `doneBytes` of the `totalBytes` the model uses. */
  | { type: 'hfProgress'; requestId?: number; doneBytes: number; totalBytes: number }
  /** Reply to `hfOpen`: the model, or why it was refused (nothing of it stays on the device then). */
  | { type: 'hfOpened'; requestId?: number; model?: HfModelSummary; refusal?: string }
  /** Reply to `hfGenerate`: the sample, or why there is none. */
  | { type: 'hfGenerated'; requestId?: number; sample?: HfSample; refusal?: string }
  /** One iteration of an `hfTrain` run: the trainer's numbers and the batch's first response. */
  | { type: 'hfTrainRow'; requestId?: number; row: HfTrainRow }
  /** One iteration of an `hfTrain` run as the inspector reads it: its trace, each response's prompt and each token as text ('' for padding). */
  | { type: 'hfTrace'; requestId?: number; trace: IterationTrace; prompts: string[]; tokenText: string[]; endedWithEos: boolean[] }
  /** The adapter (PEFT's two files) and training state after iteration `iter` of an `hfTrain` run in flight, for the page to keep. */
  | { type: 'hfTrainCheckpoint'; requestId?: number; iter: number; config: string; weights: Uint8Array; state: Uint8Array }
  /** The task's greedy held-out accuracy before or after an `hfTrain` run. */
  | { type: 'hfTrainEval'; requestId?: number; eval: HfTrainEval }
  /** Reply to `hfTrain`: iterations done, whether Stop ended it, or why it could not run. */
  | { type: 'hfTrained'; requestId?: number; iterations: number; stopped: boolean; refusal?: string }
  /** Reply to `hfExportAdapter`: adapter_config.json and adapter_model.safetensors (and the training state when asked), or why not. */
  | { type: 'hfAdapter'; requestId?: number; config?: string; weights?: Uint8Array; state?: Uint8Array; refusal?: string }
  /** Reply to `hfLoadAdapter`: the adapter's settings, or why it was refused (the model keeps its adapter then). */
  | { type: 'hfAdapterLoaded'; requestId?: number; adapter?: HfAdapterInfo; refusal?: string }
  /** The GPU device was lost (`iter` = iterations done then); a recovery follows unless the backend is the CPU. */
  | { type: 'deviceLost'; reason: string; stage?: TrainerStage; iter: number | null }
  /**
   * A new device was acquired and the trainer rebuilt from its last saved full state (iteration
   * `fromIter`); the `replayed` iterations between it and the loss run again (`resumed`: training goes on).
   */
  | { type: 'deviceRecovered'; adapter: string; fromIter: number; lostAt: number | null; replayed: number; resumed: boolean }
  /** No WebGPU device came back; the page offers the CPU backend with its saved state (iteration `iter`). */
  | { type: 'deviceUnavailable'; message: string; iter: number | null };

/** A written reward function's refusal during training: the iteration (1-based) and the problem with its sample. */
export type RewardFunctionReport = RewardFunctionProblem & { iter: number };

/** Where a NaN/Inf first appeared, and the knob the page suggests. */
export interface NonFiniteReport {
  iter: number;
  stage: Exclude<TrainerStage, 'idle'>;
  quantity: string;
  value: number;
  advice: KnobAdvice;
}

// ───────────────────────────── self-test worker ─────────────────────────────

/** The self-test worker runs once on page load and posts exactly one of these. */
export type SelftestResult =
  | {
      type: 'selftest-ok';
      adapter: string;
      backendLabel: string;
      kernel: string;
      /** The GPU's float32 results and the float64 reference on the same inputs. */
      values: number[];
      reference: number[];
      maxAbsErr: number;
      passed: boolean;
      /** Tolerance the result was judged against. */
      tolerance: number;
      ms: number;
      /** The adapter's names, fallback flag and limits ("About this GPU"); absent from older fixtures. */
      about?: AboutGpu;
    }
  | { type: 'selftest-unavailable'; reason: GpuUnavailableReason; message: string; shortfalls?: LimitShortfall[]; browserError?: string }
  | { type: 'selftest-error'; message: string };

/** Narrowing helper for the page's onmessage: rejects anything without a known `type`. */
export function isWorkerMessage(x: unknown): x is WorkerToPage {
  if (typeof x !== 'object' || x === null) return false;
  const t = (x as { type?: unknown }).type;
  return (
    t === 'ready' ||
    t === 'compiling' ||
    t === 'stage' ||
    t === 'metrics' ||
    t === 'samples' ||
    t === 'eval' ||
    t === 'finished' ||
    t === 'resetDone' ||
    t === 'ratios' ||
    t === 'trace' ||
    t === 'paused' ||
    t === 'error' ||
    t === 'snapshot' ||
    t === 'rewardModelTrained' ||
    t === 'rewardFunctionChecked' ||
    t === 'sftProgress' ||
    t === 'sftPhaseEval' ||
    t === 'sftDone' ||
    t === 'sftTimed' ||
    t === 'state' ||
    t === 'stateLoaded' ||
    t === 'hfProgress' ||
    t === 'hfOpened' ||
    t === 'hfGenerated' ||
    t === 'hfTrainRow' ||
    t === 'hfTrace' ||
    t === 'hfTrainCheckpoint' ||
    t === 'hfTrainEval' ||
    t === 'hfTrained' ||
    t === 'hfAdapter' ||
    t === 'hfAdapterLoaded' ||
    t === 'deviceLost' ||
    t === 'deviceRecovered' ||
    t === 'deviceUnavailable'
  );
}
