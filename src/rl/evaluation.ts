// Held-out evaluation: the task's metrics on prompts training never draws, for the policy PPO
// optimises (sampled as the rollouts are) and for greedy decoding. One batch, one readback each.
import { generate, disposeRollout } from '../model/generate.ts';
import type { SamplingModel } from '../model/sequenceModel.ts';
import { leftPadBatch, type CharTokenizer } from '../model/tokenizer.ts';
import type { Task, TaskSample } from '../tasks/task.ts';
import { evalSeed } from '../util/seedStreams.ts';
import type { PpoConfig } from './config.ts';
import { meanPassAtK, passAtKKey } from './passAtK.ts';
import { promptWidth } from './rollout.ts';

/**
 * `samplesPerPrompt` draws per prompt at the rollout temperature / top-k / top-p, metrics averaged
 * over all draws (`accuracy`, …), then greedy decoding (the same metrics prefixed `greedy_`).
 * On tasks with a correctness notion, also `pass_at_<draws>`: the fraction of prompts with at least
 * one correct draw (src/rl/passAtK.ts).
 * The sampling seed is fixed per run, so evaluations before and after training share their noise.
 */
export async function evaluatePolicy(
  actor: SamplingModel,
  task: Task,
  tok: CharTokenizer,
  cfg: PpoConfig,
  count: number,
  samplesPerPrompt: number,
): Promise<Record<string, number>> {
  const sampled = await heldOutSamples(actor, task, tok, count, cfg.maxResponseLength, {
    temperature: cfg.temperature,
    topK: cfg.topK,
    topP: cfg.topP,
    seed: evalSeed(cfg.seed),
    repeat: samplesPerPrompt,
  });
  const greedy = await greedySamples(actor, task, tok, count, cfg.maxResponseLength);
  const out: Record<string, number> = { ...task.evaluate(sampled) };
  if (task.isCorrect)
    out[passAtKKey(samplesPerPrompt)] = meanPassAtK(
      sampled.map((s) => task.isCorrect!(s)),
      samplesPerPrompt,
      samplesPerPrompt,
    );
  for (const [k, v] of Object.entries(task.evaluate(greedy))) out[`greedy_${k}`] = v;
  return out;
}

/** Greedy (top-k 1) responses for the first `count` held-out prompts, in one batch. */
export function greedySamples(model: SamplingModel, task: Task, tok: CharTokenizer, count: number, maxNew: number): Promise<TaskSample[]> {
  return heldOutSamples(model, task, tok, count, maxNew, { temperature: 1, topK: 1, topP: 1, seed: 0, repeat: 1 });
}

/** Responses for the first `count` held-out prompts, each drawn `repeat` times, in one batch (one readback). */
export async function heldOutSamples(
  model: SamplingModel,
  task: Task,
  tok: CharTokenizer,
  count: number,
  maxNew: number,
  s: { temperature: number; topK: number; topP: number; seed: number; repeat: number },
): Promise<TaskSample[]> {
  const { be } = model;
  const prompts = task.evalPrompts(count).flatMap((p) => Array.from({ length: s.repeat }, () => p));
  const P = promptWidth(task);
  const pb = leftPadBatch(
    prompts.map((p) => tok.encodePrompt(p)),
    P,
  );
  const A = Math.min(maxNew, model.maxPositions - P);
  const r = generate(model, { ...pb, B: prompts.length, P }, A, { temperature: s.temperature, topK: s.topK, topP: s.topP, seed: s.seed, eosId: tok.eosId, padId: tok.padId });
  const [seq, fin] = await be.readMany([r.sequences, r.finished]);
  disposeRollout(model, r);
  const S = P + A;
  return prompts.map((prompt, b) => ({ prompt, response: tok.decode(seq.subarray(b * S + P, (b + 1) * S)), endedWithEos: fin[b] === 1 }));
}
