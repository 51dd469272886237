// The LM-PPO trainer (OpenRLHF / verl style), written once against the Backend interface so it
// runs on WebGPU and on the float64 CPU reference backend. One iteration:
//   rollout (sampling on the device; its sequences are read back and scored on the host)
//   → experience (old/ref logprobs, values, scores → shaped rewards → advantages), recorded only
//   → ppoEpochs × shuffled minibatches of actor + critic updates, recorded only
//   → the NEXT iteration's rollout, recorded after the update (it samples from the updated actor,
//     exactly as the next iteration would)
//   → ONE readMany of every statistic and of the next rollout's sequences, reduced on the host.
// So after the first iteration an iteration waits on the device once: its rollout is already on
// the host when it starts (`next`), and nothing between its submits awaits a result. The next
// rollout is dropped when anything outside an iteration changes the weights or the config.
// Extra readbacks happen only where a result steers the loop: the learned reward model's scores
// (clipped and EOS-penalised on the host), DAPO's dynamic sampling (rollouts sampled and read
// round by round, never ahead) and, with targetKl set, ppo_kl at epoch boundaries.
//
// Every random stream (prompts, sampling, critic head init, minibatch order) is derived from
// (seed, iteration, …) (util/seedStreams.ts), so the iteration counter is the whole RNG state: saveState /
// loadState carry it with the weights, both optimisers and the KL controller (trainerState.ts).
import type { Backend } from '../backend/backend.ts';
import type { DecodeShape } from '../backend/seqOps.ts';
import type { Tensor } from '../backend/tensor.ts';
import { modelFromCheckpoint, saveCheckpoint } from '../model/checkpoint.ts';
import { generate, disposeRollout } from '../model/generate.ts';
import { Gpt, lastTokenPositions, type GptSnapshot, type OptimizerParams } from '../model/gpt.ts';
import { leftPadBatch, type CharTokenizer } from '../model/tokenizer.ts';
import { getTask, taskTokenizer } from '../tasks/index.ts';
import type { Task, TaskSample } from '../tasks/task.ts';
import { validateConfig, type PpoConfig } from './config.ts';
import { informativeGroups, overlongPenalties } from './dapo.ts';
import { disposeExperience, makeExperience, type Experience } from './experience.ts';
import { klCoefsApplied, klControllerFor, type KlController } from './klController.ts';
import { experienceMetrics, updateMetrics, type ExperienceHost, type UpdateHost } from './metrics.ts';
import { epochMinibatches } from './minibatch.ts';
import { concatRows, decodeSamples, iterationPrompts, promptWidth, recordRollout, responseLength, type RecordedRollout, type RolloutBatch } from './rollout.ts';
import { sampleRows, type SampleRow } from './samples.ts';
import { decodeTrainerState, encodeTrainerState, type TrainerStateParts } from './trainerState.ts';
import { finalScores, ruleScores } from './score.ts';
import { checkFinite } from './nonFinite.ts';
import { actorStep, criticStep, disposeMinibatch, gatherMinibatch, warmupLr, type ActorStepStats, type CriticStepStats } from './update.ts';
import { quoted } from '../model/safetensors.ts';
import { criticHeadSeed, evalSeed, rolloutSeed } from '../util/seedStreams.ts';

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
  /**
   * The stage the computation is in, for the page's pipeline view. On WebGPU the rollout sampled
   * ahead is announced when the device has finished the update before it, not when it is recorded.
   */
  onStage?: (s: Stage) => void;
  /**
   * The stage whose work the host is recording or waiting for: benchmarks count dispatches and
   * submits between these. The final wait of an iteration counts as "update".
   */
  onRecord?: (s: Stage) => void;
}

/** Both stage hooks, defaulted. */
type StageHooks = Required<Pick<TrainerInit, 'onStage' | 'onRecord'>>;

function stageHooks(init: Pick<TrainerInit, 'onStage' | 'onRecord'>): StageHooks {
  return { onStage: init.onStage ?? (() => {}), onRecord: init.onRecord ?? (() => {}) };
}

export interface IterationResult {
  iter: number;
  metrics: Record<string, number>;
  samples: SampleRow[];
  /**
   * Ratios π_new/π_old and advantages of the last minibatch's action tokens; `seqRatios` are its
   * GSPO sequence ratios exp(mean_t(logπ_new − logπ_old)) per sequence with the sequence's advantage
   * (its token-mean advantage), for the clipping view.
   */
  ratios: { ratios: number[]; advantages: number[]; seqRatios?: number[]; seqAdvantages?: number[] };
}

export interface IterationOptions {
  /** Use this rollout instead of sampling (tests feed both backends the same sequences). */
  rollout?: RolloutBatch;
  /**
   * Sample the next iteration's rollout after this one's update, read back with its statistics
   * (default true; never with DAPO's dynamic sampling or a given rollout). False where no next
   * iteration follows, e.g. the last of a budget.
   */
  sampleNext?: boolean;
}

/** Settings that fix the models or the data stream: changing them needs a new trainer. */
export const RESTART_FIELDS: readonly (keyof PpoConfig)[] = ['task', 'nLayer', 'nHead', 'dModel', 'seed'];

/** Sample rows sent to the UI per iteration. */
const SAMPLE_ROWS = 6;
const ADAM_EPS = 1e-8;

/** Device copies of the trainer's moving state (see PpoTrainer.deviceSnapshot). */
export interface TrainerSnapshot {
  actor: GptSnapshot;
  critic: GptSnapshot | null;
  iter: number;
  klBeta: number;
  config: PpoConfig;
}

export class PpoTrainer {
  private cfg: PpoConfig;
  private critic: Gpt | null = null;
  private snap: TrainerSnapshot | null = null;
  private klCtl: KlController;
  private iterCount = 0;
  /** Changes when an iteration starts or ends: stage announcements from the device check it. */
  private stageEpoch = 0;
  private last: RolloutBatch | null = null;
  /**
   * The rollout of iteration `iter`, sampled at the end of iteration iter − 1 (after its update,
   * in the same submit) and read back with that iteration's statistics; `seconds` is the time its
   * recording took (on the CPU backend, its computation). Host arrays only: dropping it frees
   * nothing on the device.
   */
  private next: { iter: number; r: RolloutBatch; seconds: number } | null = null;

  private constructor(
    private readonly be: Backend,
    config: PpoConfig,
    private readonly task: Task,
    private readonly tok: CharTokenizer,
    private readonly actor: Gpt,
    private readonly reference: Gpt,
    private readonly checkpoint: Uint8Array,
    private readonly rewardModel: RewardScorer | undefined,
    private readonly hooks: StageHooks,
    /** null: the caller installs the critic (loadState); undefined: built from the SFT checkpoint. */
    noCritic?: null,
  ) {
    this.cfg = config;
    this.klCtl = klControllerFor(config);
    if (noCritic !== null) this.ensureCritic();
  }

  static async create(init: TrainerInit): Promise<PpoTrainer> {
    const { be, config } = init;
    throwIfInvalid(config);
    const task = getTask(config.task);
    const tok = taskTokenizer(task);
    const opts = { alphabet: tok.alphabet, task: task.name };
    const actor = modelFromCheckpoint(be, init.actorCheckpoint, opts).model;
    const reference = modelFromCheckpoint(be, init.actorCheckpoint, opts).model;
    if (config.rewardSource === 'model' && !init.rewardModel) throw new Error('rewardSource = "model" needs a trained reward model');
    const t = new PpoTrainer(be, config, task, tok, actor, reference, init.actorCheckpoint, init.rewardModel, stageHooks(init));
    t.checkShapes(config);
    await be.precompileShape(decodeShapeOf(config, actor.cfg));
    return t;
  }

  /** A stage that begins now for both hooks: its work is recorded (and, on the CPU backend, run) from here. */
  private enter(s: Stage): void {
    this.hooks.onRecord(s);
    this.hooks.onStage(s);
  }

  get iter(): number {
    return this.iterCount;
  }

  get config(): PpoConfig {
    return this.cfg;
  }

  /** The rollout of the latest iteration (host copy). */
  get lastRollout(): RolloutBatch | null {
    return this.last;
  }

  private checkShapes(c: PpoConfig): void {
    const P = promptWidth(this.task);
    const maxSeq = this.actor.cfg.maxSeq;
    if (P + c.maxResponseLength > maxSeq) {
      throw new Error(
        `maxResponseLength = ${c.maxResponseLength}: prompt width ${P} + response must fit the model's maxSeq ${maxSeq} (at most ${maxSeq - P})`,
      );
    }
  }

  /** The critic exists only for GAE; it starts from the SFT trunk with a zero value head. */
  private ensureCritic(): void {
    if (this.cfg.advantageEstimator !== 'gae' || this.critic) return;
    const seed = criticHeadSeed(this.cfg.seed);
    this.critic = modelFromCheckpoint(this.be, this.checkpoint, { head: 'value', seed }).model;
  }

  /** Knobs that may change mid-run; throws for invalid configs and for RESTART_FIELDS changes. */
  setConfig(c: PpoConfig): void {
    throwIfInvalid(c);
    const changed = RESTART_FIELDS.filter((f) => c[f] !== this.cfg[f]);
    if (changed.length > 0) throw new Error(`changing ${changed.join(', ')} needs a new trainer (reset)`);
    if (c.rewardSource === 'model' && !this.rewardModel) throw new Error('rewardSource = "model" needs a trained reward model');
    this.checkShapes(c);
    const prev = this.cfg;
    this.cfg = { ...c };
    this.next = null; // sampled under the previous settings
    const klFields = ['klController', 'klCoef', 'klLossCoef', 'klTarget', 'klHorizon', 'klInReward', 'useKlLoss'] as const;
    if (klFields.some((f) => prev[f] !== c[f])) this.klCtl = klControllerFor(c);
    this.ensureCritic();
  }

  private optimizer(model: Gpt, peak: number): OptimizerParams {
    const c = this.cfg;
    return {
      lr: warmupLr(peak, c.warmupSteps, model.steps),
      beta1: c.adamBeta1,
      beta2: c.adamBeta2,
      eps: ADAM_EPS,
      weightDecay: c.weightDecay,
      maxGradNorm: c.maxGradNorm,
    };
  }

  async iteration(opts: IterationOptions = {}): Promise<IterationResult> {
    const epoch = ++this.stageEpoch;
    try {
      return await this.runIteration(opts, epoch);
    } finally {
      this.stageEpoch++; // a stage still pending from a failed iteration is not announced
    }
  }

  /** `onStage(s)` once the device has done the work submitted so far, if the iteration is still running. */
  private stageWhenDone(s: Stage, epoch: number): Promise<void> {
    const done = this.be.flushThen(() => {
      if (this.stageEpoch === epoch) this.hooks.onStage(s);
    });
    // A failed iteration never awaits it: its rejection (a lost device) must not go unhandled.
    done.catch(() => {});
    return done;
  }

  private async runIteration(opts: IterationOptions, epoch: number): Promise<IterationResult> {
    const { be, cfg, task, tok } = this;
    const iter = this.iterCount;
    const c0 = { ...be.counters() };
    const t0 = performance.now();

    this.enter('rollout');
    const ready = this.next?.iter === iter && !opts.rollout ? this.next : null;
    this.next = null;
    const batch = await this.scoredBatch(iter, opts.rollout ?? ready?.r);
    const { r, samples, scores } = batch;
    this.last = r;
    const t1 = performance.now();

    this.enter('experience');
    const applied = klCoefsApplied(cfg, this.klCtl);
    const critic = cfg.advantageEstimator === 'gae' ? this.critic : null;
    const exp = makeExperience(be, { actor: this.actor, reference: this.reference, critic }, r, scores, applied.rewardBeta, cfg);
    const t2 = performance.now();

    // The device starts on the experience while the update records, and the pipeline view moves to
    // "update" when it is done. Not when this iteration waited for its own rollout: that readback
    // was a submit already, and an iteration keeps to 3.
    const experienceDone = ready ? this.stageWhenDone('update', epoch) : null;
    this.hooks.onRecord('update');
    if (!ready) this.hooks.onStage('update');
    const { stats, lastMb, lastActor, lastRows } = await this.update(exp, r, iter, critic, applied.lossCoef);
    const expTensors = [exp.actionMask, exp.kl, exp.rewards, exp.advantages, exp.returns, exp.values, exp.refLogprobs, exp.oldLogprobs];
    const lastTensors = [lastMb.oldLogprobs, lastActor.logprobs, lastMb.advantages, lastMb.actionMask];
    const flat: Tensor[] = [...expTensors, ...lastTensors, ...stats.tensors];
    const tn = performance.now();
    const sampleNext = opts.sampleNext !== false && !opts.rollout && !cfg.dynamicSampling;
    let updateDone: Promise<void> | null = null;
    let nextRollout: RecordedRollout | null = null;
    if (sampleNext) {
      // The update goes to the device now (on the CPU backend it has already run), so the pipeline
      // view can switch to the rollout when the device does; the rollout records meanwhile.
      updateDone = this.stageWhenDone('rollout', epoch);
      this.hooks.onRecord('rollout');
      nextRollout = this.recordSample(iter + 1);
      this.hooks.onRecord('update'); // the final wait
    }
    const nextSeconds = (performance.now() - tn) / 1000;
    const all = await be.readMany(nextRollout ? [...flat, ...nextRollout.tensors] : flat);
    // Settled already (their work preceded the readback's); awaited so no stage arrives after the iteration.
    await experienceDone;
    await updateDone;
    const t3 = performance.now();
    const host = all.slice(0, flat.length);
    const nextBatch = nextRollout ? nextRollout.finish(all.slice(flat.length)) : null;

    const [mask, kl, rewards, advantages, returns, values, refLogprobs, oldLogprobs] = host;
    const [mbOld, mbNew, mbAdv, mbMask] = host.slice(expTensors.length, expTensors.length + lastTensors.length);
    const u = stats.unpack(host.slice(expTensors.length + lastTensors.length));
    // A NaN/Inf is named by the first stage holding one (the host copies, action tokens only).
    checkFinite('experience', iter, [['ref_logprobs', refLogprobs], ['old_logprobs', oldLogprobs], ['values', values], ['kl', kl], ['token_rewards', rewards], ['advantages', advantages], ['returns', returns]], mask);
    checkFinite('update', iter, [['policy_loss', u.policy.flatMap((x) => Array.from(x))], ['entropy', u.entropy.map((x) => x[0])], ['kl_loss', u.klLoss.map((x) => x[0])], ['actor_grad_norm', u.actorGradNorm.map((x) => x[0])], ['value_loss', u.value.flatMap((x) => Array.from(x))], ['critic_grad_norm', u.criticGradNorm.map((x) => x[0])]]);
    const rolloutLogprobs = r.logprobs ? Float64Array.from(r.logprobs) : null;
    const e: ExperienceHost = { B: r.B, A: r.A, mask: Float32Array.from(mask), kl, rewards, advantages, returns, values, refLogprobs, scores, oldLogprobs, rolloutLogprobs };
    disposeMinibatch(be, lastMb);
    be.dispose(lastActor.logprobs);
    stats.dispose();
    disposeExperience(be, exp);

    const ratioAll = mbNew.map((lp, i) => Math.exp(Math.min(20, Math.max(-20, lp - mbOld[i]))));
    const ratios: number[] = [];
    const advs: number[] = [];
    for (let i = 0; i < mbMask.length; i++) if (mbMask[i] !== 0) (ratios.push(ratioAll[i]), advs.push(mbAdv[i]));
    const seq = sequenceRatios(mbNew, mbOld, mbAdv, mbMask, r.A);

    const metrics: Record<string, number> = {
      iter,
      ...experienceMetrics(e, samples, applied, task.name === 'sentiment'),
      ...updateMetrics(u),
      ...batch.metrics,
      actor_lr: warmupLr(cfg.actorLr, cfg.warmupSteps, Math.max(0, this.actor.steps - 1)),
      critic_lr: critic ? warmupLr(cfg.criticLr, cfg.warmupSteps, Math.max(0, critic.steps - 1)) : 0,
      // A rollout sampled ahead: the time recording it took (its computation on the CPU backend),
      // moved out of the previous iteration's update time. On WebGPU the device time of both is
      // in the final readback's wait, counted in time_update_s.
      time_rollout_s: (ready ? ready.seconds : 0) + (t1 - t0) / 1000,
      time_experience_s: (t2 - t1) / 1000,
      time_update_s: (t3 - t2) / 1000 - nextSeconds,
    };
    const c1 = be.counters();
    metrics.gpu_submits = c1.submits - c0.submits;
    metrics.gpu_readbacks = c1.readbacks - c0.readbacks;
    metrics.gpu_dispatches = c1.dispatches - c0.dispatches;
    // A skipped AdamW step (non-finite norm) changed nothing, so it does not count for bias
    // correction or warm-up from the next iteration on.
    this.actor.steps -= metrics.actor_skipped_steps;
    if (critic) critic.steps -= metrics.critic_skipped_steps;
    // β for the next iteration from verl's scale of KL (n = sequences in the batch).
    this.klCtl.update(metrics.kl_token_mean, r.B);
    this.iterCount++;
    // Only now, with every check of this iteration passed: a failed iteration leaves no rollout ahead.
    if (nextBatch) this.next = { iter: this.iterCount, r: nextBatch, seconds: nextSeconds };
    return {
      iter,
      metrics,
      samples: sampleRows(tok, r, samples, e, lastRows, ratioAll, SAMPLE_ROWS, mbNew),
      ratios: { ratios, advantages: advs, seqRatios: seq.ratios, seqAdvantages: seq.advantages },
    };
  }

  /** Scores of a rollout: task rule or reward model, clipped, EOS penalty, DAPO overlong penalty. */
  private async scoreRollout(r: RolloutBatch, iter: number): Promise<{ samples: TaskSample[]; scores: Float64Array }> {
    const { cfg, task, tok } = this;
    // Checked before decoding: NaN logits can sample ids the tokenizer would refuse.
    checkFinite('rollout', iter, [['sampler_logprobs', r.logprobs]]);
    const samples = decodeSamples(r, tok);
    const raw = cfg.rewardSource === 'model' ? await this.modelScores(r) : ruleScores(task, samples);
    const scores = finalScores(raw, samples, cfg.scoreClip, cfg.noEosPenalty);
    if (cfg.overlongBuffer > 0) {
      const lengths = Array.from({ length: r.B }, (_, b) => responseLength(r, b));
      const pen = overlongPenalties(lengths, cfg.maxResponseLength, cfg.overlongBuffer, cfg.overlongPenalty);
      for (let b = 0; b < r.B; b++) scores[b] += pen[b];
    }
    checkFinite('rollout', iter, [['reward_scores', scores]]);
    return { samples, scores };
  }

  /**
   * The iteration's scored batch. With dynamicSampling (DAPO), groups whose final scores are all
   * equal are dropped and further rounds of fresh prompts are sampled until promptsPerBatch
   * informative groups are found or maxExtraRollouts extra rounds are spent; a batch still short
   * is filled with dropped groups (in sampling order) so its shape never changes. verl instead
   * raises an error when max_num_gen_batches is exhausted; the page must not stop.
   */
  private async scoredBatch(iter: number, given?: RolloutBatch) {
    const { cfg } = this;
    if (given || !cfg.dynamicSampling) {
      const r = given ?? (await this.sample(iter, 0));
      return { r, ...(await this.scoreRollout(r, iter)), metrics: {} as Record<string, number> };
    }
    const parts: RolloutBatch[] = [];
    const partScores: Float64Array[] = [];
    const kept: { part: number; g: number }[] = [];
    const dropped: { part: number; g: number }[] = [];
    let rounds = 0;
    for (let round = 0; round <= cfg.maxExtraRollouts && kept.length < cfg.promptsPerBatch; round++) {
      const r = await this.sample(iter, round);
      const { scores } = await this.scoreRollout(r, iter);
      const part = parts.length;
      parts.push(r);
      partScores.push(scores);
      const split = informativeGroups(scores, r.group);
      for (const g of split.kept) kept.push({ part, g });
      for (const g of split.dropped) dropped.push({ part, g });
      rounds++;
    }
    const chosen = [...kept, ...dropped].slice(0, cfg.promptsPerBatch);
    const rows: { part: number; row: number }[] = [];
    for (const { part, g } of chosen) parts[part].group.forEach((gg, row) => gg === g && rows.push({ part, row }));
    const r = concatRows(parts, rows);
    const samples = decodeSamples(r, this.tok);
    const scores = Float64Array.from(rows, ({ part, row }) => partScores[part][row]);
    return {
      r,
      samples,
      scores,
      metrics: {
        filtered_groups: dropped.length,
        dynamic_sampling_rounds: rounds,
        filled_with_filtered: Math.max(0, cfg.promptsPerBatch - kept.length),
      } as Record<string, number>,
    };
  }

  private async sample(iter: number, round: number): Promise<RolloutBatch> {
    const rec = this.recordSample(iter, round);
    return rec.finish(await this.be.readMany(rec.tensors));
  }

  /**
   * Samples the next iteration's rollout now and keeps it for that iteration (one readback), e.g.
   * while the page waits for Start, so even a run's first iteration waits on the device once. Not
   * with DAPO's dynamic sampling; a no-op when that rollout is already here.
   */
  async sampleAhead(): Promise<void> {
    if (this.cfg.dynamicSampling || this.next?.iter === this.iterCount) return;
    const iter = this.iterCount;
    const cfg = this.cfg;
    const t = performance.now();
    const r = await this.sample(iter, 0);
    // Kept only if nothing moved meanwhile (the worker queues its commands, so this is insurance).
    if (this.iterCount === iter && this.cfg === cfg) this.next = { iter, r, seconds: (performance.now() - t) / 1000 };
  }

  /** Iteration `iter`'s rollout (DAPO round `round`), recorded from the current actor. */
  private recordSample(iter: number, round = 0): RecordedRollout {
    const { cfg, task } = this;
    const { prompts, group } = iterationPrompts(task, cfg, iter, round);
    return recordRollout(this.actor, this.tok, prompts, group, promptWidth(task), cfg.maxResponseLength, {
      temperature: cfg.temperature,
      topK: cfg.topK,
      topP: cfg.topP,
      seed: rolloutSeed(cfg.seed, iter, round),
    });
  }

  /** Learned reward: read at the last real token of each sequence (the EOS when there is one). */
  private async modelScores(r: RolloutBatch): Promise<Float64Array> {
    const { be } = this;
    const S = r.P + r.A;
    const out = be.scope(() => {
      const seq = be.tensor(r.sequences, [r.B, S], 'i32');
      const attn = be.tensor(r.attnMask, [r.B, S]);
      const pos = be.tensor(r.positions, [r.B, S], 'i32');
      return this.rewardModel!.score(seq, attn, pos, lastTokenPositions(r.attnMask, r.B, S)); // (B)
    });
    const [scores] = await be.readMany([out]);
    be.dispose(out);
    return scores;
  }

  private async update(exp: Experience, r: RolloutBatch, iter: number, critic: Gpt | null, klLossCoef: number) {
    const { be, cfg } = this;
    const stats = new StatsCollector(be);
    let lastMb = null as ReturnType<typeof gatherMinibatch> | null;
    let lastActor = null as ActorStepStats | null;
    let lastRows: Int32Array = new Int32Array(0);
    for (let epoch = 0; epoch < cfg.ppoEpochs; epoch++) {
      const epochPolicy: Tensor[] = [];
      for (const rows of epochMinibatches(r.B, cfg.miniBatches, cfg.seed, iter, epoch)) {
        // The previous minibatch runs while this one records; the last one goes with the final readback.
        if (lastMb) be.flush();
        if (lastMb) disposeMinibatch(be, lastMb);
        if (lastActor) be.dispose(lastActor.logprobs);
        const mb = gatherMinibatch(be, exp, r, rows);
        const a = actorStep(this.actor, mb, r.P, r.A, cfg, this.optimizer(this.actor, cfg.actorLr), klLossCoef);
        let c: CriticStepStats | null = null;
        if (critic) c = criticStep(critic, mb, r.P, r.A, cfg, this.optimizer(critic, cfg.criticLr));
        stats.add(a, c);
        epochPolicy.push(a.policy);
        lastMb = mb;
        lastActor = a;
        lastRows = rows;
      }
      // Early stop on approx KL, the only mid-update readback, at epoch boundaries. Neither verl
      // nor OpenRLHF has one; it is the `target_kl` of OpenAI Spinning Up's PPO and of
      // Stable-Baselines3 (both stop at 1.5 × target_kl, per minibatch; here: > targetKl, per epoch).
      if (cfg.targetKl !== null && epoch < cfg.ppoEpochs - 1) {
        const ks = await be.readMany(epochPolicy);
        const approxKl = ks.reduce((s, k) => s + k[3], 0) / ks.length;
        if (approxKl > cfg.targetKl) {
          stats.earlyStopped = epoch + 1;
          break;
        }
      }
    }
    return { stats, lastMb: lastMb!, lastActor: lastActor!, lastRows };
  }

  /**
   * The task's metrics on its held-out prompts, for the policy PPO optimises (sampled at the
   * rollout temperature / top-k / top-p, `samplesPerPrompt` draws per prompt, metrics averaged over
   * all draws: `accuracy`, …) and for greedy decoding (the same metrics prefixed `greedy_`).
   * The sampling seed is fixed, so evaluations before and after training share their noise.
   */
  async evaluate(count = 64, samplesPerPrompt = 4): Promise<Record<string, number>> {
    const { cfg, task, tok } = this;
    const sampled = await heldOutSamples(this.actor, task, tok, count, cfg.maxResponseLength, {
      temperature: cfg.temperature,
      topK: cfg.topK,
      topP: cfg.topP,
      seed: evalSeed(cfg.seed),
      repeat: samplesPerPrompt,
    });
    const greedy = await greedySamples(this.actor, task, tok, count, cfg.maxResponseLength);
    const out: Record<string, number> = { ...task.evaluate(sampled) };
    for (const [k, v] of Object.entries(task.evaluate(greedy))) out[`greedy_${k}`] = v;
    return out;
  }

  /**
   * The full trainer state as one safetensors file (trainerState.ts): actor, critic and their AdamW
   * moments and step counts, the reference (SFT) weights, the KL controller's β, the iteration
   * counter (which is the RNG state), the config, task and alphabet. One readback.
   */
  async saveState(): Promise<Uint8Array> {
    const { be } = this;
    const a = this.actor.optimizerState;
    const c = this.critic?.optimizerState ?? null;
    const ts = [this.actor.params, a.m, a.v, this.reference.params, ...(this.critic && c ? [this.critic.params, c.m, c.v] : [])];
    const [ap, am, av, ref, cp, cm, cv] = await be.readMany(ts);
    return encodeTrainerState({
      task: this.task.name,
      alphabet: this.tok.alphabet,
      config: { ...this.cfg },
      modelConfig: { ...this.actor.cfg },
      iteration: this.iterCount,
      klBeta: this.klCtl.beta,
      actor: { params: ap, m: am, v: av, steps: a.steps },
      critic: c && cp ? { params: cp, m: cm, v: cv, steps: c.steps } : null,
      reference: Float32Array.from(ref),
    });
  }

  /**
   * A trainer resumed from saveState's bytes: everything is validated before any device memory is
   * touched, so a bad file throws and leaves nothing behind. Continuing it reproduces the
   * original run (bit-exactly on the CPU backend).
   */
  static async loadState(init: Omit<TrainerInit, 'config' | 'actorCheckpoint'> & { state: Uint8Array }): Promise<PpoTrainer> {
    const st = decodeTrainerState(init.state);
    const task = getTask(st.config.task);
    const tok = taskTokenizer(task);
    if (st.alphabet !== tok.alphabet) throw new Error(`trainer state: alphabet ${quoted(st.alphabet)} does not match task "${task.name}"`);
    if (st.modelConfig.vocabSize !== tok.vocabSize) throw new Error(`trainer state: vocabSize ${st.modelConfig.vocabSize} does not match task "${task.name}" (${tok.vocabSize})`);
    if (st.config.rewardSource === 'model' && !init.rewardModel) throw new Error('rewardSource = "model" needs a trained reward model');
    const { be } = init;
    const reference = new Gpt(be, st.modelConfig, st.reference);
    const sft = await saveCheckpoint(reference, { alphabet: tok.alphabet, task: task.name });
    const actor = new Gpt(be, st.modelConfig, st.actor.params);
    actor.setState(st.actor.params, st.actor.m, st.actor.v, st.actor.steps);
    const t = new PpoTrainer(be, st.config, task, tok, actor, reference, sft, init.rewardModel, stageHooks(init), st.critic ? null : undefined);
    t.checkShapes(st.config);
    t.applyState(st);
    return t;
  }

  /** Replaces this trainer's whole state with saveState's bytes (validated first; throws untouched). */
  async restoreState(state: Uint8Array): Promise<void> {
    const st = decodeTrainerState(state);
    const changed = RESTART_FIELDS.filter((f) => st.config[f] !== this.cfg[f]);
    if (changed.length > 0) throw new Error(`trainer state: ${changed.join(', ')} differ from this trainer's; load it into a new trainer`);
    if (JSON.stringify(st.modelConfig) !== JSON.stringify(this.actor.cfg)) throw new Error('trainer state: the model config differs from this trainer\'s');
    if (st.alphabet !== this.tok.alphabet) throw new Error('trainer state: the alphabet differs from this trainer\'s');
    if (st.config.rewardSource === 'model' && !this.rewardModel) throw new Error('rewardSource = "model" needs a trained reward model');
    this.checkShapes(st.config);
    this.reference.setState(st.reference, new Float64Array(st.reference.length), new Float64Array(st.reference.length), 0);
    this.actor.setState(st.actor.params, st.actor.m, st.actor.v, st.actor.steps);
    this.cfg = { ...st.config };
    this.applyState(st);
  }

  /** Critic, KL controller and counters from a decoded state (actor and reference already set). */
  private applyState(st: TrainerStateParts): void {
    if (st.critic) {
      if (!this.critic) this.critic = new Gpt(this.be, { ...this.actor.cfg, head: 'value' }, st.critic.params);
      this.critic.setState(st.critic.params, st.critic.m, st.critic.v, st.critic.steps);
    } else {
      this.critic?.dispose();
      this.critic = null;
    }
    this.klCtl = klControllerFor(this.cfg);
    this.klCtl.beta = st.klBeta;
    this.iterCount = st.iteration;
    this.last = null;
    this.next = null;
  }

  /**
   * A device-side copy of every weight, both optimisers, the KL controller's β and the iteration
   * counter, taken before an iteration so a NaN can be undone without any readback. The buffers
   * are reused from one call to the next; restoreDeviceSnapshot puts them back.
   */
  deviceSnapshot(): TrainerSnapshot {
    const prev = this.snap;
    const snap: TrainerSnapshot = {
      actor: this.actor.snapshotInto(prev?.actor ?? null),
      critic: this.critic ? this.critic.snapshotInto(prev?.critic ?? null) : null,
      iter: this.iterCount,
      klBeta: this.klCtl.beta,
      config: { ...this.cfg },
    };
    if (prev?.critic && !snap.critic) this.be.dispose(prev.critic.params, prev.critic.m, prev.critic.v);
    this.snap = snap;
    return snap;
  }

  /** Back to the state of deviceSnapshot (the reference never moves, so it needs no copy). */
  restoreDeviceSnapshot(s: TrainerSnapshot): void {
    if (s !== this.snap) throw new Error('restoreDeviceSnapshot: not this trainer\'s latest snapshot');
    this.actor.restoreSnapshot(s.actor);
    if (s.critic && this.critic) this.critic.restoreSnapshot(s.critic);
    this.cfg = { ...s.config };
    this.klCtl = klControllerFor(this.cfg);
    this.klCtl.beta = s.klBeta;
    this.iterCount = s.iter;
    this.next = null; // sampled from the weights being undone
  }

  async actorCheckpoint(): Promise<Uint8Array> {
    return saveCheckpoint(this.actor, { alphabet: this.tok.alphabet, task: this.task.name });
  }

  /** Host copies of the flat actor and critic parameters (tests compare backends with them). */
  async readWeights(): Promise<{ actor: Float64Array; critic: Float64Array | null }> {
    const ts = [this.actor.params, ...(this.critic ? [this.critic.params] : [])];
    const [actor, critic] = await this.be.readMany(ts);
    return { actor, critic: critic ?? null };
  }

  dispose(): void {
    if (this.snap) {
      const { actor, critic } = this.snap;
      this.be.dispose(actor.params, actor.m, actor.v, critic?.params, critic?.m, critic?.v);
      this.snap = null;
    }
    this.actor.dispose();
    this.reference.dispose();
    this.critic?.dispose();
    this.critic = null;
  }
}

/**
 * GSPO's sequence ratios of the rows of a minibatch: exp(mean over action tokens of
 * logπ_new − logπ_old) (log-ratio clamped above at 10 as verl's compute_policy_loss_gspo), with the
 * row's token-mean advantage. Rows without action tokens are left out.
 */
export function sequenceRatios(logp: ArrayLike<number>, old: ArrayLike<number>, adv: ArrayLike<number>, mask: ArrayLike<number>, A: number) {
  const ratios: number[] = [];
  const advantages: number[] = [];
  for (let b = 0; b * A < mask.length; b++) {
    let n = 0;
    let d = 0;
    let a = 0;
    for (let t = 0; t < A; t++) {
      const k = b * A + t;
      if (mask[k] === 0) continue;
      n++;
      d += logp[k] - old[k];
      a += adv[k];
    }
    if (n === 0) continue;
    ratios.push(Math.exp(Math.min(10, d / n)));
    advantages.push(a / n);
  }
  return { ratios, advantages };
}

/** Every minibatch's device statistics, read in the iteration's single final readMany. */
class StatsCollector {
  private actor: ActorStepStats[] = [];
  private critic: CriticStepStats[] = [];
  earlyStopped = 0;
  constructor(private readonly be: Backend) {}

  add(a: ActorStepStats, c: CriticStepStats | null): void {
    this.actor.push(a);
    if (c) this.critic.push(c);
  }

  get tensors(): Tensor[] {
    return [
      ...this.actor.flatMap((a) => [a.policy, a.entropy, a.gradNorm, ...(a.klLoss ? [a.klLoss] : [])]),
      ...this.critic.flatMap((c) => [c.value, c.gradNorm]),
    ];
  }

  unpack(host: Float64Array[]): UpdateHost {
    const u: UpdateHost = { policy: [], entropy: [], klLoss: [], actorGradNorm: [], value: [], criticGradNorm: [] };
    let i = 0;
    for (const a of this.actor) {
      u.policy.push(host[i++]);
      u.entropy.push(host[i++]);
      u.actorGradNorm.push(host[i++]);
      if (a.klLoss) u.klLoss.push(host[i++]);
    }
    for (let k = 0; k < this.critic.length; k++) {
      u.value.push(host[i++]);
      u.criticGradNorm.push(host[i++]);
    }
    return u;
  }

  dispose(): void {
    this.be.dispose(...this.tensors);
  }
}

function throwIfInvalid(c: PpoConfig): void {
  const problems = validateConfig(c as PpoConfig & Record<string, unknown>);
  if (problems.length > 0) throw new Error(`invalid PPO config:\n  ${problems.map((p) => p.message).join('\n  ')}`);
}

/**
 * The one shape `config`'s rollouts and held-out samples decode at with a model of these sizes
 * (the checkpoint's, which need not be the config's): checkShapes keeps P + response ≤ maxSeq.
 */
export function decodeShapeOf(config: PpoConfig, model: { dModel: number; nHead: number }): DecodeShape {
  return { dModel: model.dModel, nHead: model.nHead, seqLen: promptWidth(getTask(config.task)) + config.maxResponseLength };
}

/** Greedy (top-k 1) responses for the first `count` held-out prompts, in one batch. */
export function greedySamples(model: Gpt, task: Task, tok: CharTokenizer, count: number, maxNew: number): Promise<TaskSample[]> {
  return heldOutSamples(model, task, tok, count, maxNew, { temperature: 1, topK: 1, topP: 1, seed: 0, repeat: 1 });
}

/** Responses for the first `count` held-out prompts, each drawn `repeat` times, in one batch (one readback). */
export async function heldOutSamples(
  model: Gpt,
  task: Task,
  tok: CharTokenizer,
  count: number,
  maxNew: number,
  s: { temperature: number; topK: number; topP: number; seed: number; repeat: number },
): Promise<TaskSample[]> {
  const { be } = model;
  const prompts = task.evalPrompts(count).flatMap((p) => Array.from({ length: s.repeat }, () => p));
  const P = promptWidth(task);
  const pb = leftPadBatch(prompts.map((p) => tok.encodePrompt(p)), P);
  const A = Math.min(maxNew, model.cfg.maxSeq - P);
  const r = generate(model, { ...pb, B: prompts.length, P }, A, { temperature: s.temperature, topK: s.topK, topP: s.topP, seed: s.seed, eosId: tok.eosId, padId: tok.padId });
  const [seq, fin] = await be.readMany([r.sequences, r.finished]);
  disposeRollout(model, r);
  const S = P + A;
  return prompts.map((prompt, b) => ({ prompt, response: tok.decode(seq.subarray(b * S + P, (b + 1) * S)), endedWithEos: fin[b] === 1 }));
}
