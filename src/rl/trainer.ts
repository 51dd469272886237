// The LM-PPO trainer (OpenRLHF / verl style), written once against the Backend interface so it
// runs on WebGPU and on the float64 CPU reference backend. One iteration:
//   rollout (sampling on the device; its sequences are read back and scored on the host)
//   → experience (old/ref logprobs, values, scores → shaped rewards → advantages), recorded only
//   → ppoEpochs × shuffled minibatches of actor + critic updates, recorded only
//   → the NEXT iteration's rollout, recorded after the update (rolloutSource.ts)
//   → ONE readback of every statistic and of the next rollout's sequences, reduced on the host.
// The rollout's tensors stay on the device from the sampler to the last minibatch. Extra
// readbacks happen only where a result steers the loop: the learned reward model's scores
// (clipped and EOS-penalised on the host), DAPO's dynamic sampling (rollouts sampled and read
// round by round, never ahead) and, with targetKl set, ppo_kl at epoch boundaries.
//
// Every random stream is derived from (seed, iteration, …) (util/seedStreams.ts), so the iteration
// counter is the whole RNG state: saveState / loadState carry it with the weights, both optimisers
// and the KL controller (trainerSave.ts).
import type { Backend } from '../backend/backend.ts';
import { COV_LOSS_MODES } from '../reference/policyLoss.ts';
import { covSelect } from '../ops/covSelect.ts';
import { POLICY_STATS } from '../ops/policyLoss.ts';
import { tensorsIn } from '../backend/scope.ts';
import { precompileShape, type DecodeShape } from '../ops/decodeStep.ts';
import type { Tensor } from '../backend/tensor.ts';
import { checkpointBytes } from '../model/checkpoint.ts';
import type { OptimizerParams } from '../model/gpt.ts';
import type { TrainerModel } from '../model/sequenceModel.ts';
import { type ModelFamily, trainerModelFromCheckpoint } from './trainerModels.ts';
import type { CharTokenizer } from '../model/tokenizer.ts';
import { getTask, taskTokenizer } from '../tasks/index.ts';
import type { Task } from '../tasks/task.ts';
import { criticHeadSeed, rolloutSeed } from '../util/seedStreams.ts';
import { rolloutCorrectionOf, type PpoConfig } from './config.ts';
import { dynamicSampledBatch, type ScoredBatch } from './dapoSampling.ts';
import { evaluatePolicy } from './evaluation.ts';
import type { IterationTrace } from './inspect/trace.ts';
import { makeExperience, type Experience } from './experience.ts';
import { klCoefsApplied, klControllerFor, type KlController } from './klController.ts';
import { experienceMetrics, updateMetrics, type ExperienceHost } from './metrics.ts';
import { epochMinibatches } from './minibatch.ts';
import { checkExperienceFinite, checkUpdateFinite, type Stage } from './nonFinite.ts';
import { IterationHooks } from './iterationHooks.ts';
import type { IterationMetrics } from './metricNames.ts';
import { Probe } from './probe.ts';
import { maskedRatios, sequenceRatios, tokenRatios } from './ratios.ts';
import { readNamed, type HostValues } from './readNamed.ts';
import {
  actionMaskOf,
  greedyBaselines,
  iterationPrompts,
  promptWidth,
  recordRollout,
  sampleGreedy,
  type RecordedRollout,
  type RolloutBatch,
  type RolloutTensors,
} from './rollout.ts';
import { RolloutSource } from './rolloutSource.ts';
import { SAMPLE_ROWS, sampleRows, type SampleRow } from './samples.ts';
import type { RewardSandbox } from './rewardFunction/sandbox.ts';
import { scoreRollout, type RewardScorer, type ScoringSetup } from './score.ts';
import { criticFromState, modelsFromState, requireRewardModel, requireRewardSandbox, restorableState, RESTART_FIELDS, saveTrainerState, setPolicyState } from './trainerSave.ts';
import { disposeSnapshot, restoreModels, takeSnapshot, type TrainerSnapshot } from './trainerSnapshot.ts';
import type { TrainerStateParts } from './trainerState.ts';
import { actorStep, covStepSeed, criticStep, gatherMinibatch, warmupLr, type ActorStepStats, type Minibatch } from './update.ts';
import { actorPolicyParams } from './policyParams.ts';
import { UpdateStats } from './updateStats.ts';

export type { Stage } from './nonFinite.ts';
export type { RewardScorer } from './score.ts';
export type { TrainerSnapshot } from './trainerSnapshot.ts';
export { RESTART_FIELDS } from './trainerSave.ts';
export { greedySamples, heldOutSamples } from './evaluation.ts';
export { sequenceRatios } from './ratios.ts';

export interface TrainerInit {
  be: Backend;
  config: PpoConfig;
  /** SFT checkpoint (safetensors): actor, frozen reference and critic trunk all start from it. */
  actorCheckpoint: Uint8Array;
  rewardModel?: RewardScorer;
  /** The interpreter a written reward function runs in; needed when rewardSource is "function". */
  rewardSandbox?: RewardSandbox;
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
  /** The family the roles run in (default 'gpt', the page's): 'hf' runs the same weights on HfModel (trainerModels.ts). */
  family?: ModelFamily;
}

export interface IterationResult {
  iter: number;
  metrics: IterationMetrics;
  samples: SampleRow[];
  /**
   * Ratios π_new/π_old and advantages of the last minibatch's action tokens; `seqRatios` are its
   * GSPO sequence ratios exp(mean_t(logπ_new − logπ_old)) per sequence with the sequence's advantage
   * (its token-mean advantage), for the clipping view.
   */
  ratios: { ratios: number[]; advantages: number[]; seqRatios?: number[]; seqAdvantages?: number[] };
  /** The iteration's batch for the inspector, only when asked for (IterationOptions.capture). */
  trace?: IterationTrace;
  /** (B) prompt text of each response of the trace; with `trace` only. */
  prompts?: string[];
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
  /**
   * Capture the iteration's trace for the inspector (inspect/capture.ts): each step's new log-probs
   * and values are kept and read with the final readback. Off, the iteration reads nothing more.
   */
  capture?: boolean;
  /**
   * Asked at the final readback whether to capture after all (a pause that came in while this
   * iteration ran): true before the readback, the trace joins it; true only once the readback has
   * resolved, the trace is read in one readback more. Meanwhile the update keeps each step's new
   * log-probs and values on the device, unread and freed with the iteration when it returns false.
   */
  lateCapture?: () => boolean;
}

const ADAM_EPS = 1e-8;

/** What the update leaves for the final readback: its statistics and the last minibatch's view. */
interface UpdateResult {
  stats: UpdateStats;
  lastRows: Int32Array; // (n) batch rows of the last minibatch
  newLogprobs: Tensor; // (n, A) log π_new of the last minibatch
  ratios: Tensor; // (n, A) π_new/π_old of the last minibatch, 0 where masked
  /** (n, A) 1 where clip_cov / kl_cov acted in the last minibatch step; null for the other modes. */
  covSelected: Tensor | null;
}

export class PpoTrainer {
  private cfg: PpoConfig;
  private critic: TrainerModel | null = null;
  private readonly family: ModelFamily;
  private snap: TrainerSnapshot | null = null;
  private klCtl: KlController;
  private readonly rewardSandbox: RewardSandbox | undefined;
  private iterCount = 0;
  private last: RolloutBatch | null = null;
  private readonly probe: Probe;
  private readonly rollouts: RolloutSource;

  private constructor(
    private readonly be: Backend,
    config: PpoConfig,
    private readonly task: Task,
    private readonly tok: CharTokenizer,
    private readonly actor: TrainerModel,
    private readonly reference: TrainerModel,
    private readonly checkpoint: Uint8Array,
    private readonly rewardModel: RewardScorer | undefined,
    hooks: Pick<TrainerInit, 'onStage' | 'onRecord' | 'rewardSandbox' | 'family'>,
    /** null: the caller installs the critic (loadState); undefined: built from the SFT checkpoint. */
    noCritic?: null,
  ) {
    this.cfg = config;
    this.rewardSandbox = hooks.rewardSandbox;
    this.family = hooks.family ?? 'gpt';
    this.klCtl = klControllerFor(config);
    this.probe = new Probe(be, { onStage: hooks.onStage ?? (() => {}), onRecord: hooks.onRecord ?? (() => {}) });
    this.rollouts = new RolloutSource(be, (iter, round) => this.recordRollout(iter, round));
    if (noCritic !== null) this.ensureCritic();
  }

  static async create(init: TrainerInit): Promise<PpoTrainer> {
    const { be, config } = init;
    const task = getTask(config.task);
    const tok = taskTokenizer(task);
    const opts = { alphabet: tok.alphabet, task: task.name };
    const family = init.family ?? 'gpt';
    const actor = trainerModelFromCheckpoint(be, family, init.actorCheckpoint, opts);
    const reference = trainerModelFromCheckpoint(be, family, init.actorCheckpoint, opts);
    requireRewardModel(config, !!init.rewardModel);
    requireRewardSandbox(config, !!init.rewardSandbox);
    const t = new PpoTrainer(be, config, task, tok, actor, reference, init.actorCheckpoint, init.rewardModel, init);
    t.checkShapes(config);
    // Gpt samples through the fused decode step of its shape; HfModel decodes through its own per-op chain.
    if (family === 'gpt') await precompileShape(be, decodeShapeOf(config, actor.cfg));
    return t;
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

  /** Knobs that may change mid-run (checked where they entered); throws for RESTART_FIELDS changes. */
  setConfig(c: PpoConfig): void {
    const changed = RESTART_FIELDS.filter((f) => c[f] !== this.cfg[f]);
    if (changed.length > 0) throw new Error(`changing ${changed.join(', ')} needs a new trainer (reset)`);
    requireRewardModel(c, !!this.rewardModel);
    requireRewardSandbox(c, !!this.rewardSandbox);
    this.checkShapes(c);
    const prev = this.cfg;
    this.cfg = { ...c };
    this.rollouts.drop(); // sampled under the previous settings
    const klFields = ['klController', 'klCoef', 'klLossCoef', 'klTarget', 'klHorizon', 'klInReward', 'useKlLoss'] as const;
    if (klFields.some((f) => prev[f] !== c[f])) this.klCtl = klControllerFor(c);
    this.ensureCritic();
  }

  async iteration(opts: IterationOptions = {}): Promise<IterationResult> {
    const held: Tensor[] = [];
    try {
      return await this.probe.around((probe) => this.runIteration(opts, new IterationHooks(probe, opts, held)));
    } finally {
      this.be.dispose(...held);
      this.rollouts.discardRecorded(); // a failed iteration leaves no rollout ahead
    }
  }

  /**
   * One PPO iteration: rollout → experience → update → readback → metrics. `hooks` holds what is
   * not the algorithm: the stage probe, the inspector's capture, the device tensors to free.
   */
  private async runIteration(opts: IterationOptions, hooks: IterationHooks): Promise<IterationResult> {
    const { be, cfg } = this;
    const iter = this.iterCount;

    // Rollout: this iteration's sequences (sampled ahead, or now), decoded and scored on the host.
    hooks.probe.rollout();
    const { r, samples, scores, device, aheadSeconds, metrics: samplingMetrics } = await this.scoredBatch(iter, opts.rollout, hooks);
    this.last = r;

    // Experience: log-probs of actor and reference, values, rewards shaped by the KL, advantages.
    hooks.probe.experience();
    const klCoefs = klCoefsApplied(cfg, this.klCtl);
    const critic = cfg.advantageEstimator === 'gae' ? this.critic : null;
    // ReMax: the reward of each prompt's greedy response is its samples' baseline.
    const baselines = cfg.advantageEstimator === 'remax' ? await this.greedyBaselines(r, iter) : null;
    const exp = makeExperience(be, { actor: this.actor, reference: this.reference, critic }, r, scores, klCoefs.rewardBeta, cfg, device, baselines);
    hooks.held.push(...tensorsIn(exp));

    // Update: ppoEpochs × shuffled minibatches of actor and critic steps; then the next rollout.
    hooks.probe.update(aheadSeconds !== null);
    const upd = await this.update(exp, iter, critic, klCoefs.lossCoef, hooks);
    const sampleNext = opts.sampleNext !== false && !opts.rollout && !cfg.dynamicSampling;
    const next = sampleNext ? hooks.probe.nextRollout(() => this.rollouts.recordNext(iter + 1)) : null;

    // Readback: one of everything the host reduces (the trace too, when captured), then its checks.
    const { newLogprobs, ratios, covSelected, stats } = upd;
    const host = await readNamed(be, { ...experienceTensors(exp), newLogprobs, ratios, covSelected, ...stats.tensors, ...hooks.readbackTensors(exp), next });
    await hooks.probe.done();
    const e = experienceHost(r, scores, host, cfg);
    checkExperienceFinite(iter, e);
    checkUpdateFinite(iter, host);
    const trace = await hooks.trace(be, exp, host, { iter, cfg, beta: this.klCtl.beta, r, scores, baselines });

    // Metrics, and the state the next iteration starts from.
    const metrics: IterationMetrics = {
      iter,
      ...experienceMetrics(e, samples, klCoefs, this.task.name === 'sentiment'),
      ...updateMetrics(host),
      ...samplingMetrics,
      actor_lr: warmupLr(cfg.actorLr, cfg.warmupSteps, Math.max(0, this.actor.steps - 1)),
      critic_lr: critic ? warmupLr(cfg.criticLr, cfg.warmupSteps, Math.max(0, critic.steps - 1)) : 0,
      ...hooks.probe.metrics(aheadSeconds ?? 0),
    };
    this.endIteration(metrics, critic, r.B);
    // Only now, with every check of this iteration passed, does the rollout ahead count.
    if (host.next) this.rollouts.keepNext(this.iterCount, host.next, hooks.probe.nextRolloutSeconds);
    return {
      iter,
      metrics,
      samples: sampleRows(this.tok, r, samples, e, upd.lastRows, host.ratios, SAMPLE_ROWS, host.newLogprobs, host.covSelected ?? undefined),
      ratios: clippingView(e, upd.lastRows, host.newLogprobs, host.ratios),
      ...(trace ? { trace, prompts: [...r.prompts] } : {}),
    };
  }

  /**
   * Counters after a checked iteration: a skipped AdamW step (non-finite norm) changed nothing, so
   * it does not count for bias correction or warm-up; β for the next iteration from verl's scale
   * of KL (n = sequences in the batch).
   */
  private endIteration(metrics: IterationMetrics, critic: TrainerModel | null, B: number): void {
    this.actor.steps -= metrics.actor_skipped_steps;
    if (critic) critic.steps -= metrics.critic_skipped_steps;
    this.klCtl.update(metrics.kl_token_mean, B);
    this.iterCount++;
  }

  /** The iteration's scored batch: one rollout, or DAPO's rounds of them (dapoSampling.ts). */
  private async scoredBatch(
    iter: number,
    given: RolloutBatch | undefined,
    hooks: IterationHooks,
  ): Promise<ScoredBatch & { device: RolloutTensors | null; aheadSeconds: number | null }> {
    if (given || !this.cfg.dynamicSampling) {
      const { rollout, aheadSeconds } = await this.rollouts.take(iter, given);
      hooks.held.push(...tensorsIn(rollout.device));
      return { r: rollout.batch, ...(await scoreRollout(this.scoring, rollout, iter)), metrics: {}, device: rollout.device, aheadSeconds };
    }
    this.rollouts.drop(); // never ahead with dynamic sampling
    const batch = await dynamicSampledBatch(this.cfg, this.tok, async (round) => {
      const rollout = await this.rollouts.sample(iter, round);
      hooks.held.push(...tensorsIn(rollout.device)); // rows of several rounds: the experience uploads the batch
      return { r: rollout.batch, scores: (await scoreRollout(this.scoring, rollout, iter)).scores };
    });
    return { ...batch, device: null, aheadSeconds: null };
  }

  /**
   * ReMax's baselines (B): the greedy responses came with the rollout (same actor, same readback);
   * a rollout given from outside is completed here with one extra readback. They are scored with
   * the rollout's own reward source (verl ray_trainer: the greedy batch through the same reward).
   */
  private async greedyBaselines(r: RolloutBatch, iter: number): Promise<Float64Array> {
    const greedy = r.greedy ?? (await sampleGreedy(this.actor, this.tok, r, rolloutSeed(this.cfg.seed, iter, 0)));
    const { scores } = await scoreRollout(this.scoring, { batch: greedy, device: null }, iter);
    return greedyBaselines({ ...r, greedy }, scores);
  }

  private get scoring(): ScoringSetup {
    return { be: this.be, cfg: this.cfg, task: this.task, tok: this.tok, rewardModel: this.rewardModel, rewardSandbox: this.rewardSandbox };
  }

  /** ppoEpochs × shuffled minibatches, recorded only; the target-KL check is its one readback. */
  private async update(exp: Experience, iter: number, critic: TrainerModel | null, klLossCoef: number, hooks: IterationHooks): Promise<UpdateResult> {
    const { be, cfg } = this;
    const { held, kept } = hooks;
    const stats = new UpdateStats();
    let last: { mb: Minibatch; actor: ActorStepStats; covSeed: number } | null = null;
    for (let epoch = 0; epoch < cfg.ppoEpochs; epoch++) {
      const epochPolicy: Tensor[] = [];
      for (const [index, rows] of epochMinibatches(exp.B, cfg.miniBatches, cfg.seed, iter, epoch).entries()) {
        // The previous minibatch runs while this one records; the last one goes with the final readback.
        if (last) be.flush();
        if (last) be.dispose(...tensorsIn(last.mb), ...(kept ? [] : [last.actor.logprobs]));
        const mb = gatherMinibatch(be, exp, rows);
        const covSeed = covStepSeed(cfg.seed, iter, epoch, index);
        const a = actorStep(this.actor, mb, exp.P, exp.A, cfg, this.optimizer(this.actor, cfg.actorLr), klLossCoef, covSeed);
        const c = critic ? criticStep(critic, mb, exp.P, exp.A, cfg, this.optimizer(critic, cfg.criticLr), kept !== null) : null;
        held.push(...tensorsIn(mb), ...tensorsIn(a), ...tensorsIn(c));
        kept?.keep(epoch, index, rows, a.logprobs, c?.values ?? null);
        stats.add(a, c);
        epochPolicy.push(a.policy);
        last = { mb, actor: a, covSeed };
      }
      // Early stop on approx KL, the only mid-update readback, at epoch boundaries. Neither verl
      // nor OpenRLHF has one; it is the `target_kl` of OpenAI Spinning Up's PPO and of
      // Stable-Baselines3 (both stop at 1.5 × target_kl, per minibatch; here: > targetKl, per epoch).
      if (cfg.targetKl !== null && epoch < cfg.ppoEpochs - 1) {
        const ks = await be.readMany(epochPolicy);
        const approxKl = ks.reduce((s, k) => s + k[POLICY_STATS.ppoKl], 0) / ks.length;
        if (approxKl > cfg.targetKl) break;
      }
    }
    // The clipping view's token ratios, read with the statistics.
    const { mb, actor, covSeed } = last!;
    const ratios = tokenRatios(be, actor.logprobs, mb.oldLogprobs, mb.actionMask);
    held.push(ratios);
    // The samples view marks the tokens clip_cov / kl_cov acted on in that step: the same op on
    // the step's own inputs and parameters (seed included) as its loss, so the same tokens.
    const covSelected = COV_LOSS_MODES.includes(cfg.lossMode)
      ? covSelect(be, { oldLogprobs: mb.oldLogprobs, logprobs: actor.logprobs, advantages: mb.advantages, actionMask: mb.actionMask, params: actorPolicyParams(cfg, covSeed) })
      : null;
    if (covSelected) held.push(covSelected);
    return { stats, lastRows: mb.index, newLogprobs: actor.logprobs, ratios, covSelected };
  }

  private optimizer(model: TrainerModel, peak: number): OptimizerParams {
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

  /** Iteration `iter`'s rollout (DAPO round `round`), recorded from the current actor. */
  private recordRollout(iter: number, round: number): RecordedRollout {
    const { cfg, task } = this;
    const { prompts, group } = iterationPrompts(task, cfg, iter, round);
    return recordRollout(
      this.actor,
      this.tok,
      prompts,
      group,
      promptWidth(task),
      cfg.maxResponseLength,
      {
        temperature: cfg.temperature,
        topK: cfg.topK,
        topP: cfg.topP,
        seed: rolloutSeed(cfg.seed, iter, round),
      },
      cfg.advantageEstimator === 'remax',
    );
  }

  /**
   * Samples the next iteration's rollout now and keeps it for that iteration (one readback), e.g.
   * while the page waits for Start, so even a run's first iteration waits on the device once. Not
   * with DAPO's dynamic sampling; a no-op when that rollout is already here.
   */
  async sampleAhead(): Promise<void> {
    if (this.cfg.dynamicSampling || this.rollouts.has(this.iterCount)) return;
    const { iterCount, cfg } = this;
    // Kept only if nothing moved meanwhile (the worker queues its commands, so this is insurance).
    await this.rollouts.sampleAhead(iterCount, () => this.iterCount === iterCount && this.cfg === cfg);
  }

  /** The task's metrics on its held-out prompts (evaluation.ts). */
  evaluate(count = 64, samplesPerPrompt = 4): Promise<Record<string, number>> {
    return evaluatePolicy(this.actor, this.task, this.tok, this.cfg, count, samplesPerPrompt);
  }

  /**
   * The full trainer state as one safetensors file (trainerState.ts): actor, critic and their AdamW
   * moments and step counts, the reference (SFT) weights, the KL controller's β, the iteration
   * counter (which is the RNG state), the config, task and alphabet. One readback.
   */
  saveState(): Promise<Uint8Array> {
    const { task, tok, cfg, actor, reference, critic } = this;
    return saveTrainerState(this.be, { task, tok, cfg, actor, reference, critic, iter: this.iterCount, klBeta: this.klCtl.beta });
  }

  /**
   * A trainer resumed from saveState's bytes: everything is validated before any device memory is
   * touched, so a bad file throws and leaves nothing behind. Continuing it reproduces the
   * original run (bit-exactly on the CPU backend).
   */
  static async loadState(init: Omit<TrainerInit, 'config' | 'actorCheckpoint'> & { state: Uint8Array }): Promise<PpoTrainer> {
    const { be } = init;
    const { st, task, tok, actor, reference, sft } = await modelsFromState(be, init.state, !!init.rewardModel, init.family ?? 'gpt');
    requireRewardSandbox(st.config, !!init.rewardSandbox);
    const t = new PpoTrainer(be, st.config, task, tok, actor, reference, sft, init.rewardModel, init, st.critic ? null : undefined);
    t.checkShapes(st.config);
    t.applyState(st);
    return t;
  }

  /** Replaces this trainer's whole state with saveState's bytes (validated first; throws untouched). */
  async restoreState(state: Uint8Array): Promise<void> {
    const st = restorableState(state, { cfg: this.cfg, actor: this.actor, tok: this.tok }, !!this.rewardModel);
    this.checkShapes(st.config);
    setPolicyState(st, this.actor, this.reference);
    this.cfg = { ...st.config };
    this.applyState(st);
  }

  /** Critic, KL controller and counters from a decoded state (actor and reference already set). */
  private applyState(st: TrainerStateParts): void {
    this.critic = criticFromState(this.be, this.family, this.actor, this.critic, st);
    this.klCtl = klControllerFor(this.cfg);
    this.klCtl.beta = st.klBeta;
    this.iterCount = st.iteration;
    this.last = null;
    this.rollouts.drop();
  }

  /**
   * A device-side copy of every weight, both optimisers, the KL controller's β and the iteration
   * counter, taken before an iteration so a NaN can be undone without any readback. The buffers
   * are reused from one call to the next; restoreDeviceSnapshot puts them back.
   */
  deviceSnapshot(): TrainerSnapshot {
    this.snap = takeSnapshot(this.be, { actor: this.actor, critic: this.critic, iter: this.iterCount, klBeta: this.klCtl.beta, config: this.cfg }, this.snap);
    return this.snap;
  }

  /** Back to the state of deviceSnapshot (the reference never moves, so it needs no copy). */
  restoreDeviceSnapshot(s: TrainerSnapshot): void {
    if (s !== this.snap) throw new Error("restoreDeviceSnapshot: not this trainer's latest snapshot");
    restoreModels(s, this.actor, this.critic);
    this.cfg = { ...s.config };
    this.klCtl = klControllerFor(this.cfg);
    this.klCtl.beta = s.klBeta;
    this.iterCount = s.iter;
    this.rollouts.drop(); // sampled from the weights being undone
  }

  async actorCheckpoint(): Promise<Uint8Array> {
    const [params] = await this.be.readMany([this.actor.stateTensors().params]);
    return checkpointBytes(this.actor.cfg, this.actor.toGptLayout(params), { alphabet: this.tok.alphabet, task: this.task.name });
  }

  /** Host copies of the flat actor and critic parameters (tests compare backends with them). */
  async readWeights(): Promise<{ actor: Float64Array; critic: Float64Array | null }> {
    const ts = [this.actor.stateTensors().params, ...(this.critic ? [this.critic.stateTensors().params] : [])];
    const [actor, critic] = await this.be.readMany(ts);
    return { actor: this.actor.toGptLayout(actor), critic: this.critic && critic ? this.critic.toGptLayout(critic) : null };
  }

  dispose(): void {
    if (this.snap) disposeSnapshot(this.be, this.snap);
    this.snap = null;
    this.rollouts.dispose();
    this.actor.dispose();
    this.reference.dispose();
    this.critic?.dispose();
    this.critic = null;
  }

  private checkShapes(c: PpoConfig): void {
    const P = promptWidth(this.task);
    const maxSeq = this.actor.cfg.maxSeq;
    if (P + c.maxResponseLength > maxSeq) {
      throw new Error(`maxResponseLength = ${c.maxResponseLength}: prompt width ${P} + response must fit the model's maxSeq ${maxSeq} (at most ${maxSeq - P})`);
    }
  }

  /** The critic exists only for GAE; it starts from the SFT trunk with a zero value head. */
  private ensureCritic(): void {
    if (this.cfg.advantageEstimator !== 'gae' || this.critic) return;
    this.critic = trainerModelFromCheckpoint(this.be, this.family, this.checkpoint, { head: 'value', seed: criticHeadSeed(this.cfg.seed) });
  }
}

/** The experience's tensors the host reduces into metrics and sample rows. */
function experienceTensors(exp: Experience) {
  const { kl, rewards, advantages, returns, values, refLogprobs, oldLogprobs, rsMask } = exp;
  return { kl, rewards, advantages, returns, values, refLogprobs, oldLogprobs, rsMask };
}

/** The experience on the host; the mask and the sampler's log-probs come from the rollout's host copy. */
function experienceHost(r: RolloutBatch, scores: Float64Array, h: HostValues<ReturnType<typeof experienceTensors>>, cfg: PpoConfig): ExperienceHost {
  const rolloutLogprobs = r.logprobs ? Float64Array.from(r.logprobs) : null;
  return { B: r.B, A: r.A, mask: actionMaskOf(r), ...h, scores, rolloutLogprobs, rolloutCorrection: rolloutCorrectionOf(cfg) };
}

/** Rows `rows` of a (B, A) host array, as a (rows.length, A) one. */
function lastMinibatchRows(x: ArrayLike<number>, rows: Int32Array, A: number): Float64Array {
  const out = new Float64Array(rows.length * A);
  rows.forEach((b, i) => {
    for (let a = 0; a < A; a++) out[i * A + a] = x[b * A + a];
  });
  return out;
}

/** The clipping view's ratios of the last minibatch: per token, and GSPO's per sequence. */
function clippingView(e: ExperienceHost, rows: Int32Array, newLogprobs: Float64Array, ratios: Float64Array): IterationResult['ratios'] {
  // The tokens the loss saw: rejection sampling's mask when it is on (the update's own).
  const [mask, old, adv] = [e.rsMask ?? e.mask, e.oldLogprobs!, e.advantages].map((x) => lastMinibatchRows(x, rows, e.A));
  const seq = sequenceRatios(newLogprobs, old, adv, mask, e.A);
  return { ...maskedRatios(ratios, adv, mask), seqRatios: seq.ratios, seqAdvantages: seq.advantages };
}

/**
 * The one shape `config`'s rollouts and held-out samples decode at with a model of these sizes
 * (the checkpoint's, which need not be the config's): checkShapes keeps P + response ≤ maxSeq.
 */
export function decodeShapeOf(config: PpoConfig, model: { dModel: number; nHead: number }): DecodeShape {
  return { dModel: model.dModel, nHead: model.nHead, seqLen: promptWidth(getTask(config.task)) + config.maxResponseLength };
}
