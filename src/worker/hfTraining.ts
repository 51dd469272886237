// Training the visitor's own model in the worker: GRPO (group_norm, no critic) or PPO with a critic,
// LoRA adapters on the one frozen base the sampler uses (src/rl/hf/hfPpo.ts), rewarded by the chat
// arithmetic task or by the page's written reward function (in the QuickJS sandbox) on the
// visitor's prompts. One `hfTrainRow` per iteration, the task's greedy held-out accuracy before and
// after, `hfTrained` at the end; Stop ends it between iterations; a NaN or Inf puts the adapters
// back as they were before the iteration and ends the run with the guard's report (hfGuard.ts). The trained actor stays on the
// device for sampling (its adapters on the model) and for the PEFT download until the next run,
// Forget, or a new folder; the critic stays beside it. A continued run takes the steps the run
// would have taken had it not stopped: the same prompts, the roles with their AdamW moments
// (across a reload too, with the training state file: trainingState.ts). During a run,
// `hfTrainCheckpoint` carries the adapter with its training state to the page, which keeps it
// for a reload or a lost device: a small adapter's after every iteration, a large one's (a
// readback of the adapters and both moments) at most every CHECKPOINT_SECONDS.
import type { Backend } from '../backend/backend.ts';
import type { HfModel } from '../model/hf/hfModel.ts';
import { GPT2_LORA_MODULES, LORA_TARGETS } from '../model/hf/lora.ts';
import { plannedLoraTargets } from '../model/hf/loraModules.ts';
import { type AdapterOffer, planMemory } from '../model/hf/memoryPlan.ts';
import type { WeightDType } from '../model/hf/weightLayout.ts';
import { disposeLoraTrainable, type LoraTrainable, newLoraTrainable } from '../model/hf/loraParams.ts';
import { MemoryFolder } from '../model/hf/folder.ts';
import { ADAPTER_CONFIG, ADAPTER_WEIGHTS, exportPeftAdapter, loadPeftValues, type PeftAdapter, readPeftAdapter } from '../model/hf/peftAdapter.ts';
import type { HfTokenizer } from '../model/hf/tokenizer.ts';
import { applyTrainingState, encodeTrainingState } from '../model/hf/trainingState.ts';
import { heldOutEvaluation } from '../rl/hf/hfEval.ts';
import { HfNanGuard, nonFiniteMessage } from '../rl/hf/hfGuard.ts';
import { hfPpoConfig } from '../rl/hf/hfPpoDefaults.ts';
import {
  HF_TRAIN_EVAL_COUNT,
  HF_TRAIN_EVAL_SAMPLES,
  type HfAdapterInfo,
  type HfTrainSettings,
  hfTrainProblems,
  promptLines,
  promptsThroughChat,
} from '../rl/hf/hfTrainSettings.ts';
import { endsWithEos, hfTaskRule } from '../rl/hf/hfTaskRule.ts';
import { RewardFunctionError } from '../rl/rewardFunction/problem.ts';
import { CompiledReward, loadRewardSandbox, scoreWithFunction } from '../rl/rewardFunction/sandbox.ts';
import { Rng } from '../util/rng.ts';
import type { WorkerToPage } from './protocol.ts';

export interface HfTrainTarget {
  model: HfModel;
  tokenizer: HfTokenizer;
  label: string;
}

export interface HfTrainRequest {
  settings: HfTrainSettings;
  /** The page's reward function source (reward 'function' only). */
  rewardFunction: string;
  /** Continue the adapter the model holds (trained or loaded) after iteration `fromIter`, instead of fresh adapters. */
  resume?: { fromIter: number };
}

/** Adapter and training-state bytes (f32 params and both moments, every role) read back after every iteration, at most. */
export const CHECKPOINT_EVERY_ITERATION_BYTES = 16 << 20;
/** Seconds between a larger run's checkpoints, at least. */
export const CHECKPOINT_SECONDS = 30;

/** Whether a checkpoint of `stateBytes` is due `secondsSince` the run's start or its last one. */
export function checkpointDue(stateBytes: number, secondsSince: number): boolean {
  return stateBytes <= CHECKPOINT_EVERY_ITERATION_BYTES || secondsSince >= CHECKPOINT_SECONDS;
}

function message(e: unknown): string {
  if (e instanceof RewardFunctionError) return `reward function: ${e.problem.message}`;
  return e instanceof Error ? e.message : String(e);
}

/**
 * The actor's adapter as PEFT saves it and, when `training` is given, the run's training state
 * beside it (its critic null for a run without one).
 */
export async function adapterFiles(
  target: Pick<HfTrainTarget, 'model' | 'label'>,
  actor: LoraTrainable,
  training: { critic: LoraTrainable | null } | null,
): Promise<{ config: string; weights: Uint8Array; state?: Uint8Array }> {
  const files = await exportPeftAdapter(target.model, actor, target.label);
  const state = training ? await encodeTrainingState(target.model.be, actor, training.critic) : undefined;
  return { config: files[ADAPTER_CONFIG], weights: files[ADAPTER_WEIGHTS], ...(state ? { state } : {}) };
}

export class HfTraining {
  private actor: LoraTrainable | null = null;
  /** The last GAE run's critic, kept for a run that continues it. */
  private critic: LoraTrainable | null = null;
  private be: Backend | null = null;
  private stopWanted = false;
  private running = false;

  constructor(
    private readonly post: (msg: WorkerToPage) => void,
    /** The device's limits for the memory plan (hfSession.ts deviceOffer; tests pass a small adapter's). */
    private readonly offer: (be: Backend, dtype: WeightDType) => AdapterOffer,
  ) {}

  /** Ends the run in flight before its next iteration (not queued). */
  stop(): void {
    if (this.running) this.stopWanted = true;
  }

  /** Trains; answers `hfTrained` (with the refusal when it could not start or failed). */
  async train(target: HfTrainTarget | null, req: HfTrainRequest, requestId: number): Promise<void> {
    const done = (body: { iterations: number; stopped: boolean; refusal?: string }) => this.post({ type: 'hfTrained', requestId, ...body });
    if (!target) return done({ iterations: 0, stopped: false, refusal: 'no model is open: pick a folder first' });
    const { model, tokenizer } = target;
    const s = req.settings;
    const problems = hfTrainProblems(s, { maxPositions: model.arch.maxPositions, hasChatTemplate: tokenizer.hasChatTemplate });
    if (problems.length > 0) return done({ iterations: 0, stopped: false, refusal: problems.map((p) => `${p.field}: ${p.range}`).join('; ') });
    const task = hfTaskRule(s.reward);
    const chat = promptsThroughChat(s);
    const encoded = new Map<string, number[]>();
    const encode = (text: string): number[] => {
      const known = encoded.get(text);
      if (known) return known;
      const ids = chat ? tokenizer.encodeChat(text) : tokenizer.encode(text, { addSpecialTokens: true });
      encoded.set(text, ids);
      return ids;
    };
    const decode = (ids: readonly number[]) => tokenizer.decode(ids, { skipSpecialTokens: true });
    const from = req.resume ? req.resume.fromIter : 0;
    const rng = new Rng(s.seed);
    // A continued run draws the task's prompts on from where the run stopped, not again from the first.
    if (task) for (let i = 0; i < from * s.promptsPerBatch; i++) task.trainPrompt(rng);
    const userPrompts = promptLines(s.prompts);
    const nextPrompts = (it: number): string[] =>
      Array.from({ length: s.promptsPerBatch }, (_, i) => (task ? task.trainPrompt(rng) : userPrompts[(it * s.promptsPerBatch + i) % userPrompts.length]));
    // Every batch of the run drawn now, in the order the iterations take them, so the positions
    // check and the memory plan see the longest prompt the run will read, not only the held-out ones.
    const runPrompts = Array.from({ length: s.iterations }, (_, it) => nextPrompts(from + it));
    const heldOutPrompts = task ? task.heldOut(HF_TRAIN_EVAL_COUNT) : [];
    // (a loop, not Math.max(...): up to 1 000 × 64 prompts would overflow a spread's arguments)
    let longestPrompt = 1;
    for (const p of [...runPrompts.flat(), ...heldOutPrompts]) longestPrompt = Math.max(longestPrompt, encode(p).length);
    if (longestPrompt + s.maxNewTokens > model.arch.maxPositions)
      return done({
        iterations: 0,
        stopped: false,
        refusal: `${task ? 'maxNewTokens' : 'prompts and maxNewTokens'}: the longest prompt is ${longestPrompt} tokens and ${s.maxNewTokens} new tokens follow it, beyond the model's ${model.arch.maxPositions} positions`,
      });
    let score: (samples: { prompt: string; response: string; endedWithEos: boolean }[]) => ArrayLike<number>;
    if (task) {
      score = (samples) => samples.map((x) => task.score(x.prompt, x.response, x.endedWithEos));
    } else {
      const sandbox = await loadRewardSandbox();
      const compiled = sandbox.compile(req.rewardFunction);
      if (!(compiled instanceof CompiledReward)) return done({ iterations: 0, stopped: false, refusal: `reward function: ${compiled.message}` });
      compiled.dispose();
      score = (samples) =>
        scoreWithFunction(
          sandbox,
          req.rewardFunction,
          samples.map(({ prompt, response }) => ({ prompt, response })),
        );
    }

    const be = model.be;
    // The memory plan before any adapter or optimiser state is made: a run with a buffer larger
    // than one binding is refused naming what to lower, instead of failing inside an iteration.
    const targets = model.arch.family === 'gpt2' ? [...GPT2_LORA_MODULES] : [...LORA_TARGETS];
    const rows = s.promptsPerBatch * s.samplesPerPrompt;
    // The held-out problems are answered at least all at once (the sampled evaluation draws several
    // answers to each): the memory plan counts that batch too.
    const evalBatch = task ? Math.max(rows, HF_TRAIN_EVAL_COUNT) : rows;
    const plan = planMemory(
      model.arch,
      {
        batch: evalBatch,
        promptTokens: longestPrompt,
        responseTokens: s.maxNewTokens,
        trainBatch: Math.max(1, Math.floor(rows / s.miniBatches)),
        updateSteps: s.ppoEpochs * s.miniBatches,
        inspect: true,
        lora: { rank: s.loraRank, targets: plannedLoraTargets(model.arch, targets), roles: s.estimator === 'gae' ? 2 : 1 },
        valueHead: s.estimator === 'gae',
        weightDtype: model.weights.dtype,
      },
      this.offer(be, model.weights.dtype),
    );
    if (!plan.fits) return done({ iterations: 0, stopped: false, refusal: plan.message });
    let actor: LoraTrainable;
    if (req.resume) {
      if (!this.actor) return done({ iterations: 0, stopped: false, refusal: 'no adapter to continue: train or load one first' });
      if (this.actor.settings.r !== s.loraRank)
        return done({ iterations: 0, stopped: false, refusal: `loraRank: the adapter to continue has rank ${this.actor.settings.r}, not ${s.loraRank}` });
      actor = this.actor;
    } else {
      this.dropActor(model);
      actor = newLoraTrainable(model, { r: s.loraRank, alpha: 2 * s.loraRank, rslora: false, targets }, s.seed);
    }
    const settings = actor.settings;
    // A continued run goes on with the critic it had; a fresh run, or one without, starts one.
    if (!req.resume || s.estimator !== 'gae') this.dropCritic();
    if (s.estimator === 'gae' && !this.critic) this.critic = newLoraTrainable(model, settings, (s.seed ^ 0x2545f491) >>> 0, true);
    const critic = this.critic;
    this.actor = actor;
    this.be = be;
    const eosIds = tokenizer.eosIds;
    const padId = tokenizer.padId ?? eosIds[0] ?? 0;
    const cfg = {
      ...hfPpoConfig({
        estimator: s.estimator,
        samplesPerPrompt: s.samplesPerPrompt,
        maxNewTokens: s.maxNewTokens,
        seed: s.seed,
        klCoef: s.klCoef,
        lr: s.lr,
        ppoEpochs: s.ppoEpochs,
        miniBatches: s.miniBatches,
      }),
      inspect: true,
    };
    const evaluate = async (when: 'before' | 'after') => {
      if (!task) return;
      const held = { prompts: heldOutPrompts.map((text) => ({ ids: encode(text), text })), decode, score: task.score };
      const opts = { maxNewTokens: s.maxNewTokens, eosIds, padId, batch: evalBatch };
      const r = await heldOutEvaluation(model, actor.adapters, held, opts, { samples: HF_TRAIN_EVAL_SAMPLES, temperature: cfg.temperature, runSeed: s.seed });
      const sampled = { accuracy: r.sampled!.accuracy, samples: HF_TRAIN_EVAL_SAMPLES };
      this.post({ type: 'hfTrainEval', requestId, eval: { when, greedyAccuracy: r.greedy.accuracy, sampled, count: r.greedy.samples.length } });
    };

    // Beyond the weights and adapters in use now, the pool keeps at most what the plan's phases
    // need: a later iteration's shorter responses do not add their sizes to the longer ones'.
    be.boundMemory(plan.workingBytes);
    const guard = new HfNanGuard(be);
    this.running = true;
    this.stopWanted = false;
    const stateBytes = 3 * 4 * (actor.size + (critic?.size ?? 0));
    let checkpointAt = performance.now();
    let it = 0;
    try {
      // a continued run starts where the last one's 'after' evaluation was taken: not measured again
      if (!req.resume) await evaluate('before');
      for (; it < s.iterations && !this.stopWanted; it++) {
        const texts = runPrompts[it];
        const ids = texts.map(encode);
        const textOf = new Map(ids.map((p, i) => [p, texts[i]]));
        let scored: { prompt: string; response: string; score: number }[] = [];
        const t0 = performance.now();
        const guarded = await guard.iteration(
          { model, actor, critic, eosIds, padId },
          ids,
          (ps, responses) => {
            const samples = ps.map((p, b) => ({
              prompt: textOf.get(p as number[]) ?? '',
              response: decode(responses[b]),
              endedWithEos: endsWithEos(responses[b], eosIds),
            }));
            const scores = score(samples);
            scored = samples.map(({ prompt, response }, b) => ({ prompt, response, score: scores[b] }));
            return scores;
          },
          cfg,
          from + it,
        );
        if (guarded.nonFinite) {
          done({ iterations: it, stopped: false, refusal: nonFiniteMessage(guarded.nonFinite) });
          return;
        }
        const m = guarded.metrics;
        this.post({
          type: 'hfTrainRow',
          requestId,
          row: {
            iter: from + it + 1,
            reward_mean: m.scoreMean,
            kl: m.klMean,
            response_length_mean: m.responseLength,
            policy_loss: m.policyLoss,
            clipfrac: m.clipfrac,
            value_loss: m.valueLoss,
            seconds: (performance.now() - t0) / 1000,
            responses: scored.map((x, b) => {
              const rowOf = m.inspected?.[b];
              const tokens = rowOf
                ? rowOf.ids.map((id, j) => ({
                    id,
                    text: tokenizer.tokenText(id),
                    old: rowOf.old[j],
                    ref: rowOf.ref[j],
                    logprob: rowOf.logprobs[j],
                    advantage: rowOf.advantages[j],
                    clip: rowOf.clip[j],
                  }))
                : [];
              return { ...x, tokens };
            }),
          },
        });
        if (m.trace) {
          const A = m.trace.A;
          const tokenText = m.responses.flatMap((r) => Array.from({ length: A }, (_, a) => (a < r.length ? tokenizer.tokenText(r[a]) : '')));
          const endedWithEos = m.responses.map((r) => endsWithEos(r, eosIds));
          this.post({ type: 'hfTrace', requestId, trace: m.trace, prompts: scored.map((x) => x.prompt), tokenText, endedWithEos });
        }
        // The run's end keeps its adapter anyway (the page asks for it): no checkpoint after the last iteration.
        if (checkpointDue(stateBytes, (performance.now() - checkpointAt) / 1000) && it + 1 < s.iterations && !this.stopWanted) {
          await this.postCheckpoint(target, actor, critic, requestId, from + it + 1);
          checkpointAt = performance.now();
        }
      }
      await evaluate('after');
      done({ iterations: it, stopped: this.stopWanted });
    } catch (e) {
      done({ iterations: it, stopped: false, refusal: message(e) });
    } finally {
      guard.dispose();
      be.boundMemory(null);
      this.running = false;
      this.stopWanted = false;
      model.setAdapters(actor.adapters); // samples now come from the trained actor
    }
  }

  /**
   * A PEFT adapter folder's two files put on the model as the actor (to sample from or continue),
   * with the run's training state when it comes along (its moments and critic); answers `hfAdapterLoaded`.
   */
  async loadAdapter(target: HfTrainTarget | null, files: { config: string; weights: Uint8Array; state?: Uint8Array }, requestId: number): Promise<void> {
    const reply = (body: { adapter?: HfAdapterInfo; refusal?: string }) => this.post({ type: 'hfAdapterLoaded', requestId, ...body });
    if (!target) return reply({ refusal: 'no model is open: pick a folder first' });
    if (this.running) return reply({ refusal: 'a training run is in progress: stop it first' });
    const { model } = target;
    let adapter: PeftAdapter;
    try {
      adapter = await readPeftAdapter(
        new MemoryFolder('the adapter', [
          [ADAPTER_CONFIG, new TextEncoder().encode(files.config)],
          [ADAPTER_WEIGHTS, files.weights],
        ]),
        model.arch,
      );
    } catch (e) {
      return reply({ refusal: message(e) });
    }
    const actor = newLoraTrainable(model, adapter.settings, 0);
    loadPeftValues(model, actor, adapter);
    let critic: LoraTrainable | null = null;
    if (files.state) {
      try {
        critic = await applyTrainingState(model, actor, files.state);
      } catch (e) {
        disposeLoraTrainable(model.be, actor);
        return reply({ refusal: message(e) });
      }
    }
    this.dropActor(model);
    this.actor = actor;
    this.critic = critic;
    this.be = model.be;
    model.setAdapters(actor.adapters);
    const { r, alpha, rslora, targets } = adapter.settings;
    reply({ adapter: { r, alpha, rslora, targets: [...targets] } });
  }

  /** The adapter and training state after iteration `iter` of the run in flight, for the page to keep. */
  private async postCheckpoint(target: HfTrainTarget, actor: LoraTrainable, critic: LoraTrainable | null, requestId: number, iter: number): Promise<void> {
    const { config, weights, state } = await adapterFiles(target, actor, { critic });
    this.post({ type: 'hfTrainCheckpoint', requestId, iter, config, weights, state: state! });
  }

  /** The actor's adapter as PEFT saves it, with `trainingState` the state a continued run needs too; answers `hfAdapter`. */
  async exportAdapter(target: HfTrainTarget | null, requestId: number, trainingState = false): Promise<void> {
    const reply = (body: { config?: string; weights?: Uint8Array; state?: Uint8Array; refusal?: string }) => this.post({ type: 'hfAdapter', requestId, ...body });
    if (!target || !this.actor) return reply({ refusal: 'no trained adapter: train the model first' });
    try {
      reply(await adapterFiles(target, this.actor, trainingState ? { critic: this.critic } : null));
    } catch (e) {
      reply({ refusal: message(e) });
    }
  }

  get hasAdapter(): boolean {
    return this.actor !== null;
  }

  /** Frees the trained actor and its critic (a new folder, Forget, the next run). */
  dropActor(model?: HfModel | null): void {
    if (this.actor && this.be) disposeLoraTrainable(this.be, this.actor);
    this.dropCritic();
    model?.setAdapters(null);
    this.actor = null;
  }

  private dropCritic(): void {
    if (this.critic && this.be) disposeLoraTrainable(this.be, this.critic);
    this.critic = null;
  }

  /** The device went with the buffers: nothing to free. */
  forgetDevice(): void {
    this.actor = null;
    this.critic = null;
  }
}
