// The LM-PPO trainer (OpenRLHF / verl style), written once against the Backend interface so it
// runs on WebGPU and on the float64 CPU reference backend. API first; the loop lands next.
import type { Backend } from '../backend/backend.ts';
import type { Tensor } from '../backend/tensor.ts';
import type { SampleRow } from '../worker/protocol.ts';
import type { PpoConfig } from './config.ts';

export type Stage = 'rollout' | 'experience' | 'update';

/** A learned reward model: one scalar per sequence read at `lastIndex[b]` (the EOS / last token). */
export interface RewardScorer {
  score(sequences: Tensor, attnMask: Tensor, positions: Tensor, lastIndex: ArrayLike<number>): Tensor; // (B)
}

export interface TrainerInit {
  be: Backend;
  config: PpoConfig;
  /** SFT checkpoint (safetensors): actor, frozen reference and critic trunk all start from it. */
  actorCheckpoint: Uint8Array;
  rewardModel?: RewardScorer;
  onStage?: (s: Stage) => void;
}

export interface IterationResult {
  iter: number;
  metrics: Record<string, number>;
  samples: SampleRow[];
  /** Ratios π_new/π_old and advantages of the last minibatch's action tokens. */
  ratios: { ratios: number[]; advantages: number[] };
}

export class PpoTrainer {
  private constructor() {}
  static async create(_init: TrainerInit): Promise<PpoTrainer> {
    throw new Error('PpoTrainer: not implemented yet');
  }
  get iter(): number {
    return 0;
  }
  async iteration(): Promise<IterationResult> {
    throw new Error('not implemented');
  }
  async evaluate(_count?: number): Promise<Record<string, number>> {
    throw new Error('not implemented');
  }
  async actorCheckpoint(): Promise<Uint8Array> {
    throw new Error('not implemented');
  }
  setConfig(_c: PpoConfig): void {}
  dispose(): void {}
}
