// The learned reward model of RLHF: a character model with the scalar 'reward' head, in either family
// (Gpt, or HfModel as GPT-2: src/rl/trainerModels.ts), read at the last real token (EOS) of each
// sequence, trained on preference pairs with the Bradley–Terry loss. One training step:
//   forward 2N rows (chosen | rejected) → scores (2N) → read back → BT loss and ∂L/∂scores on the
//   host (float64, bradleyTerry.ts) → upload → reward-head + trunk backward → gradNorm + AdamW.
// The trunk starts from the task's SFT checkpoint when there is one (the reward model then already
// "reads" the task's language), else from a fresh initialisation.
import type { Backend } from '../../backend/backend.ts';
import type { Tensor } from '../../backend/tensor.ts';
import { checkpointHostParams, saveCheckpoint } from '../../model/checkpoint.ts';
import type { GptConfig } from '../../model/config.ts';
import type { OptimizerParams } from '../../model/gpt.ts';
import { initParams, paramLayout } from '../../model/params.ts';
import type { RewardTrainable } from '../../model/sequenceModel.ts';
import { lrAt } from '../../model/schedule.ts';
import { CharTokenizer } from '../../model/tokenizer.ts';
import type { PreferencePair } from '../../tasks/task.ts';
import { Rng } from '../../util/rng.ts';
import type { RewardScorer } from '../score.ts';
import { type ModelFamily, rewardTrainable } from '../trainerModels.ts';
import { bradleyTerry, type BradleyTerryResult } from './bradleyTerry.ts';
import { encodePairs } from './pairs.ts';

export interface RewardStepInfo {
  loss: number;
  /** Pairwise accuracy on this step's own pairs, before the update. */
  accuracy: number;
  marginMean: number;
  /** Pre-clip global gradient norm. */
  gradNorm: number;
}

export interface RewardTrainOptions {
  steps: number;
  pairsPerStep: number;
  seed: number;
  peakLr: number;
  warmupSteps: number;
  /** Final lr as a fraction of the peak (cosine decay). */
  minRatio: number;
  optimizer: Omit<OptimizerParams, 'lr'>;
  /** Held-out accuracy is measured every `evalEvery` steps (and at the end) when `heldOut` is given. */
  evalEvery: number;
  heldOut?: readonly PreferencePair[];
  onLog?: (info: RewardStepInfo & { step: number; lr: number; heldOutAccuracy?: number }) => void;
}

export const DEFAULT_RM_TRAIN: Omit<RewardTrainOptions, 'steps' | 'seed'> = {
  pairsPerStep: 16,
  peakLr: 1e-3,
  warmupSteps: 10,
  minRatio: 0.1,
  optimizer: { beta1: 0.9, beta2: 0.99, eps: 1e-8, weightDecay: 0.01, maxGradNorm: 1 },
  evalEvery: 25,
};

export interface LabelTrainOptions {
  /** Passes over the labelled pairs. */
  epochs: number;
  pairsPerStep: number;
  /** Constant: a person's handful of labels should nudge the model, not overwrite it. */
  lr: number;
  seed: number;
}

export const DEFAULT_LABEL_TRAIN: LabelTrainOptions = { epochs: 4, pairsPerStep: 8, lr: 3e-4, seed: 0 };

export class RewardModel implements RewardScorer {
  private constructor(
    readonly model: RewardTrainable,
    readonly tok: CharTokenizer,
    readonly taskName: string,
  ) {}

  get be(): Backend {
    return this.model.be;
  }

  /** A fresh model of shape `cfg` (head forced to 'reward'), GPT-2's initialisation from `seed`, in `family`. */
  static fresh(be: Backend, cfg: GptConfig, alphabet: string, taskName: string, seed: number, family: ModelFamily = 'gpt'): RewardModel {
    const rm = { ...cfg, head: 'reward' as const };
    return RewardModel.withParams(be, rm, initParams(paramLayout(rm), new Rng(seed)), alphabet, taskName, family);
  }

  /** A model of shape `cfg` (head forced to 'reward') whose parameters are `host` (paramLayout's order), in `family`. */
  static withParams(be: Backend, cfg: GptConfig, host: ArrayLike<number>, alphabet: string, taskName: string, family: ModelFamily = 'gpt'): RewardModel {
    return new RewardModel(rewardTrainable(be, family, { ...cfg, head: 'reward' }, host), new CharTokenizer(alphabet), taskName);
  }

  /** Trunk from an SFT (lm) checkpoint, new reward head initialised from `seed`, in `family`. */
  static fromSft(be: Backend, sftBytes: Uint8Array, seed: number, family: ModelFamily = 'gpt'): RewardModel {
    const { host, info } = checkpointHostParams(sftBytes, { head: 'reward', seed });
    return new RewardModel(rewardTrainable(be, family, info.config, host), new CharTokenizer(info.alphabet), info.task);
  }

  /** A trained reward model checkpoint (head 'reward'), in `family`; `expect` checks its tokenizer and task. */
  static fromCheckpoint(be: Backend, bytes: Uint8Array, expect: { alphabet?: string; task?: string } = {}, family: ModelFamily = 'gpt'): RewardModel {
    const { host, info } = checkpointHostParams(bytes, expect);
    if (info.config.head !== 'reward') throw new Error(`checkpoint has a '${info.config.head}' head, not a reward model`);
    return new RewardModel(rewardTrainable(be, family, info.config, host), new CharTokenizer(info.alphabet), info.task);
  }

  /**
   * Scores (B) read at lastIndex[b] of each row: sequences (B,S) i32, attnMask (B,S) f32,
   * positions (B,S) i32. Recorded only (no readback); the caller owns the result.
   */
  score(sequences: Tensor, attnMask: Tensor, positions: Tensor, lastIndex: ArrayLike<number>): Tensor {
    return this.model.infer(sequences, attnMask, positions, { scoreAt: lastIndex });
  }

  /** Host scores of both sides of every pair, in chunks of `chunk` pairs. */
  async scorePairs(pairs: readonly PreferencePair[], chunk = 32): Promise<{ chosen: Float64Array; rejected: Float64Array }> {
    const chosen = new Float64Array(pairs.length);
    const rejected = new Float64Array(pairs.length);
    for (let i = 0; i < pairs.length; i += chunk) {
      const part = pairs.slice(i, i + chunk);
      const { scores, release } = this.forwardPairs(part, false);
      const host = await this.be.read(scores);
      release();
      chosen.set(host.subarray(0, part.length), i);
      rejected.set(host.subarray(part.length), i);
    }
    return { chosen, rejected };
  }

  /** Share of pairs where the chosen response scores higher. */
  async accuracy(pairs: readonly PreferencePair[]): Promise<number> {
    const { chosen, rejected } = await this.scorePairs(pairs);
    return bradleyTerry(chosen, rejected).accuracy;
  }

  /**
   * Bradley–Terry loss of `pairs` and its gradient ACCUMULATED into the model's flat gradients
   * (zeroGrad first). Returns the host BT result (loss, per-pair gradients, accuracy).
   */
  async lossAndBackward(pairs: readonly PreferencePair[]): Promise<BradleyTerryResult> {
    const { be, model } = this;
    const N = pairs.length;
    const { scores, cache, release } = this.forwardPairs(pairs, true);
    let bt: BradleyTerryResult;
    try {
      const host = await be.read(scores);
      bt = bradleyTerry(host.subarray(0, N), host.subarray(N));
    } catch (e) {
      release();
      throw e;
    }
    const grad = new Float64Array(2 * N); // (2N): ∂L/∂score of each row, chosen rows first
    grad.set(bt.gradChosen, 0);
    grad.set(bt.gradRejected, N);
    be.scope(() => model.backward(cache, be.tensor(grad, [2 * N]))); // the (2N) gradient is dropped after
    release();
    return bt;
  }

  /** One Bradley–Terry step on `pairs` at learning rate `lr`. */
  async trainStep(pairs: readonly PreferencePair[], lr: number, optimizer: Omit<OptimizerParams, 'lr'> = DEFAULT_RM_TRAIN.optimizer): Promise<RewardStepInfo> {
    const { be, model } = this;
    model.zeroGrad();
    const bt = await this.lossAndBackward(pairs);
    const norm = model.optimizerStep({ ...optimizer, lr });
    const [n] = await be.readMany([norm]);
    be.dispose(norm);
    return { loss: bt.loss, accuracy: bt.accuracy, marginMean: bt.marginMean, gradNorm: n[0] };
  }

  /** Trains on fresh pairs from `source` with warmup + cosine decay; returns the per-step log. */
  async train(source: (rng: Rng) => PreferencePair, opts: RewardTrainOptions): Promise<(RewardStepInfo & { step: number; heldOutAccuracy?: number })[]> {
    const rng = new Rng(opts.seed);
    const log: (RewardStepInfo & { step: number; heldOutAccuracy?: number })[] = [];
    const schedule = { peak: opts.peakLr, warmupSteps: opts.warmupSteps, minRatio: opts.minRatio, totalSteps: opts.steps };
    for (let step = 0; step < opts.steps; step++) {
      const pairs = Array.from({ length: opts.pairsPerStep }, () => source(rng));
      const lr = lrAt(step, schedule);
      const info = await this.trainStep(pairs, lr, opts.optimizer);
      const last = step === opts.steps - 1;
      const heldOutAccuracy = opts.heldOut && ((step + 1) % opts.evalEvery === 0 || last) ? await this.accuracy(opts.heldOut) : undefined;
      const entry = { ...info, step: step + 1, heldOutAccuracy };
      log.push(entry);
      opts.onLog?.({ ...entry, lr });
    }
    return log;
  }

  /**
   * Human feedback: fine-tunes on pairs a person labelled in the page (chosen = the one they
   * preferred), `epochs` shuffled passes at a constant small lr. Returns the labelled pairs'
   * accuracy and mean loss before and after.
   */
  async trainOnLabels(
    pairs: readonly PreferencePair[],
    opts: Partial<LabelTrainOptions> = {},
  ): Promise<{ steps: number; before: { loss: number; accuracy: number }; after: { loss: number; accuracy: number } }> {
    const o = { ...DEFAULT_LABEL_TRAIN, ...opts };
    if (pairs.length === 0) throw new Error('trainOnLabels: no labelled pairs');
    for (const [i, p] of pairs.entries()) {
      if (p.chosen === p.rejected) throw new Error(`trainOnLabels: pair ${i} has the same response on both sides`);
    }
    const measure = async () => {
      const { chosen, rejected } = await this.scorePairs(pairs);
      const bt = bradleyTerry(chosen, rejected);
      return { loss: bt.loss, accuracy: bt.accuracy };
    };
    const before = await measure();
    const rng = new Rng(o.seed);
    let steps = 0;
    for (let e = 0; e < o.epochs; e++) {
      const order = rng.shuffle([...pairs]);
      for (let i = 0; i < order.length; i += o.pairsPerStep) {
        await this.trainStep(order.slice(i, i + o.pairsPerStep), o.lr);
        steps++;
      }
    }
    return { steps, before, after: await measure() };
  }

  async checkpoint(): Promise<Uint8Array> {
    return saveCheckpoint(this.model, { alphabet: this.tok.alphabet, task: this.taskName });
  }

  dispose(): void {
    this.model.dispose();
  }

  /** Scores (2N) of a pair batch; with `keep` the forward cache is returned for backward. */
  private forwardPairs(pairs: readonly PreferencePair[], keep: boolean): { scores: Tensor; cache: unknown; release: () => void } {
    const { be, model } = this;
    const b = encodePairs(this.tok, pairs, model.cfg.maxSeq);
    const rows = 2 * b.N;
    const tokens = be.tensor(b.tokens, [rows, b.S], 'i32');
    const attnMask = be.tensor(b.attnMask, [rows, b.S]);
    const positions = be.tensor(b.positions, [rows, b.S], 'i32');
    const { out, cache } = model.forward(tokens, attnMask, positions, { scoreAt: b.scoreAt });
    if (!keep) model.release(cache);
    const release = () => {
      model.release(cache); // nothing to do once backward consumed it
      be.dispose(out, tokens, attnMask, positions);
    };
    return { scores: out, cache: keep ? cache : null, release };
  }
}
