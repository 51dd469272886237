// The typed message protocol between the page (main thread, draws only) and the trainer Web
// Worker (does all GPU work). Both sides import these types; every message is a plain
// structured-clonable object tagged by `type`. ArrayBuffers in `bytes` fields are transferred.
import type { PpoConfig } from '../rl/config.ts';
import type { GpuUnavailableReason } from '../gpu/device.ts';

export type BackendChoice = 'webgpu' | 'cpu';

/** Which phase of a PPO iteration the trainer is in (drives the pipeline diagram). */
export type TrainerStage = 'idle' | 'rollout' | 'experience' | 'update';
export const TRAINER_STAGES: readonly TrainerStage[] = ['idle', 'rollout', 'experience', 'update'];

/** Which network a checkpoint is for. */
export type CheckpointRole = 'actor' | 'critic' | 'reference' | 'reward';

// ───────────────────────────── page → worker ─────────────────────────────

export type PageToWorker =
  | { type: 'init'; backend: BackendChoice }
  | { type: 'loadCheckpoint'; role: CheckpointRole; bytes: ArrayBuffer }
  /** The page only sends configs that passed validateConfig. */
  | { type: 'setConfig'; config: PpoConfig }
  | { type: 'start' }
  | { type: 'pause' }
  /** Exactly one PPO iteration, then pause. */
  | { type: 'step' }
  /** Back to the initial weights of the current config and seed. */
  | { type: 'reset' }
  /** Ask for a checkpoint of the current state (answered by a `snapshot` message). */
  | { type: 'snapshot' }
  /**
   * Human feedback: fine-tune the reward model on pairs a person labelled in the page (chosen =
   * the response they preferred). Answered by `rewardModelTrained`, or `error`.
   */
  | { type: 'trainRewardModel'; pairs: LabelledPair[] };

/** One human label: two responses to the same prompt, the preferred one first. */
export interface LabelledPair {
  prompt: string;
  chosen: string;
  rejected: string;
}

// ───────────────────────────── worker → page ─────────────────────────────

/**
 * Metric names, snake_case as verl / TRL report them. A `metrics` message may carry any subset;
 * the UI charts the ones it knows and keeps the rest in the history and exports.
 */
export const METRIC_NAMES = [
  'reward_mean',
  'reward_min',
  'reward_max',
  'policy_loss',
  'value_loss',
  'clipfrac',
  'clipfrac_lower',
  'kl',
  'kl_seq',
  'beta',
  'approx_kl',
  'entropy',
  'explained_variance',
  'vf_clipfrac',
  'advantages_mean',
  'advantages_std',
  'returns_mean',
  'response_length_mean',
  'eos_rate',
  'actor_grad_norm',
  'critic_grad_norm',
  'actor_lr',
  'critic_lr',
  'time_rollout_s',
  'time_experience_s',
  'time_update_s',
] as const;
export type MetricName = (typeof METRIC_NAMES)[number];

/** One response token with the per-token quantities the teaching views colour by. */
export interface SampleToken {
  text: string;
  advantage: number;
  /** Per-token KL estimate KL_t (the shaped reward is −β·KL_t). */
  kl: number;
  /** π_new / π_old at the last update epoch. */
  ratio: number;
  value: number;
  /** Optional extras for the "KL shaping" view; absent values are drawn as unknown. */
  reward?: number;
  return?: number;
}

export interface SampleRow {
  prompt: string;
  response: string;
  /** Scalar task score of the whole response (before KL shaping). */
  reward: number;
  endedWithEos: boolean;
  tokens: SampleToken[];
}

export type WorkerToPage =
  | { type: 'ready'; adapter: string; backendLabel: string }
  | { type: 'stage'; stage: TrainerStage }
  | { type: 'metrics'; iter: number; values: Partial<Record<MetricName, number>> & Record<string, number> }
  | { type: 'samples'; iter: number; rows: SampleRow[] }
  /** Per-token ratios and advantages (action tokens only) of the latest update, for the clipping view. */
  | { type: 'ratios'; iter: number; ratios: number[]; advantages: number[] }
  | { type: 'paused'; reason: string; stage?: TrainerStage }
  | { type: 'error'; message: string; stage?: TrainerStage }
  | { type: 'snapshot'; bytes: ArrayBuffer }
  /** Reply to `trainRewardModel`: how many pairs it trained on and its accuracy on them afterwards (and before). */
  | { type: 'rewardModelTrained'; pairs: number; accuracy: number; accuracyBefore?: number };

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
    }
  | { type: 'selftest-unavailable'; reason: GpuUnavailableReason; message: string }
  | { type: 'selftest-error'; message: string };

/** Narrowing helper for the page's onmessage: rejects anything without a known `type`. */
export function isWorkerMessage(x: unknown): x is WorkerToPage {
  if (typeof x !== 'object' || x === null) return false;
  const t = (x as { type?: unknown }).type;
  return (
    t === 'ready' || t === 'stage' || t === 'metrics' || t === 'samples' || t === 'ratios' || t === 'paused' || t === 'error' || t === 'snapshot' || t === 'rewardModelTrained'
  );
}
