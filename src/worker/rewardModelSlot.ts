// The task's learned reward model on the current backend, built once from the page's checkpoint or
// the shipped one, and human feedback: fine-tuning it on pairs a person labelled. A running trainer
// holds the same object, so its next rollouts are scored by the updated weights.
import type { Backend } from '../backend/backend.ts';
import { RewardModel } from '../rl/rewardModel/rewardModel.ts';
import { getTask } from '../tasks/index.ts';
import type { CheckpointCache } from './checkpointCache.ts';
import type { LabelledPair } from './protocol.ts';

export class RewardModelSlot {
  private model: RewardModel | null = null;

  constructor(private readonly checkpoints: CheckpointCache) {}

  async get(be: Backend, taskName: string): Promise<RewardModel> {
    if (this.model) return this.model;
    const task = getTask(taskName);
    if (!task.preferencePair && !this.checkpoints.hasLoadedReward) throw new Error(`task "${task.name}" has no learned reward model (use the rule reward)`);
    const bytes = await this.checkpoints.rewardModel(task.name);
    this.model = RewardModel.fromCheckpoint(be, bytes, { alphabet: task.alphabet, task: task.name });
    return this.model;
  }

  /** Fine-tunes on the labelled pairs; accuracy on them after and before. */
  async train(be: Backend, taskName: string, pairs: LabelledPair[]): Promise<{ accuracy: number; accuracyBefore: number }> {
    const rm = await this.get(be, taskName);
    const r = await rm.trainOnLabels(pairs);
    // A host copy of the fine-tuned weights: a lost device rebuilds the reward model from it.
    this.checkpoints.keepReward(await rm.checkpoint());
    return { accuracy: r.after.accuracy, accuracyBefore: r.before.accuracy };
  }

  /** Drops the model without freeing it: it lived on a device that is gone. */
  forget(): void {
    this.model = null;
  }

  dispose(): void {
    this.model?.dispose();
    this.model = null;
  }
}
