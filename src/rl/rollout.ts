// Rollout: promptsPerBatch prompts × samplesPerPrompt samples from the actor (KV-cache sampling on
// the device), then ONE readback of the finished sequences, which the rule reward, the display and
// the minibatch inputs all need on the host. Sequence b belongs to group (prompt) ⌊b / samples⌋.
import type { Backend } from '../backend/backend.ts';
import { generate, disposeRollout } from '../model/generate.ts';
import type { Gpt } from '../model/gpt.ts';
import { leftPadBatch, type CharTokenizer } from '../model/tokenizer.ts';
import type { Task, TaskSample } from '../tasks/task.ts';
import { Rng } from '../util/rng.ts';
import type { PpoConfig } from './config.ts';
import { deriveSeed } from './minibatch.ts';

/** Host copy of one rollout: everything the experience maker uploads. */
export interface RolloutBatch {
  B: number;
  /** Padded prompt width: action positions are [P, P+A) of a sequence. */
  P: number;
  A: number;
  prompts: string[]; // (B) prompt text of each sequence
  group: Int32Array; // (B) prompt index of each sequence
  sequences: Int32Array; // (B, P+A) prompt | response, EOS then PAD
  attnMask: Float32Array; // (B, P+A)
  positions: Int32Array; // (B, P+A)
  finished: Int32Array; // (B) 1 where the response emitted EOS
}

/** Prompt width of a task: BOS + the longest prompt, fixed so every iteration has the same shapes. */
export function promptWidth(task: Task): number {
  return 1 + task.maxPromptChars;
}

export function iterationPrompts(task: Task, cfg: PpoConfig, iter: number): { prompts: string[]; group: Int32Array } {
  const rng = new Rng(deriveSeed(cfg.seed, iter, 0x7072));
  const unique = Array.from({ length: cfg.promptsPerBatch }, () => task.trainPrompt(rng));
  const prompts: string[] = [];
  const group: number[] = [];
  unique.forEach((p, g) => {
    for (let k = 0; k < cfg.samplesPerPrompt; k++) {
      prompts.push(p);
      group.push(g);
    }
  });
  return { prompts, group: Int32Array.from(group) };
}

export interface SampleSettings {
  temperature: number;
  topK: number;
  topP: number;
  seed: number;
}

/** Samples responses for `prompts` and reads the result back once. */
export async function rollout(
  be: Backend,
  actor: Gpt,
  tok: CharTokenizer,
  prompts: string[],
  group: Int32Array,
  P: number,
  A: number,
  s: SampleSettings,
): Promise<RolloutBatch> {
  const B = prompts.length;
  const pb = leftPadBatch(prompts.map((p) => tok.encodePrompt(p)), P);
  const r = generate(actor, { ...pb, B, P }, A, { ...s, eosId: tok.eosId, padId: tok.padId });
  const [seq, mask, pos, fin] = await be.readMany([r.sequences, r.attnMask, r.positions, r.finished]);
  disposeRollout(actor, r);
  return {
    B,
    P,
    A,
    prompts,
    group,
    sequences: Int32Array.from(seq),
    attnMask: Float32Array.from(mask),
    positions: Int32Array.from(pos),
    finished: Int32Array.from(fin),
  };
}

/** Response token ids of row b (A values, EOS then PAD after it). */
export function responseIds(r: RolloutBatch, b: number): Int32Array {
  const S = r.P + r.A;
  return r.sequences.subarray(b * S + r.P, (b + 1) * S);
}

/** Number of action tokens of row b (the first EOS included). */
export function responseLength(r: RolloutBatch, b: number): number {
  const S = r.P + r.A;
  let n = 0;
  for (let t = r.P; t < S; t++) n += r.attnMask[b * S + t] !== 0 ? 1 : 0;
  return n;
}

export function decodeSamples(r: RolloutBatch, tok: CharTokenizer): TaskSample[] {
  return r.prompts.map((prompt, b) => ({ prompt, response: tok.decode(responseIds(r, b)), endedWithEos: r.finished[b] === 1 }));
}

/** Action mask (B, A) on the host: the response part of the attention mask. */
export function actionMaskOf(r: RolloutBatch): Float32Array {
  const S = r.P + r.A;
  const out = new Float32Array(r.B * r.A);
  for (let b = 0; b < r.B; b++) for (let a = 0; a < r.A; a++) out[b * r.A + a] = r.attnMask[b * S + r.P + a];
  return out;
}

/** Action token ids (B, A): the response columns of the sequences. */
export function actionTokensOf(r: RolloutBatch): Int32Array {
  const out = new Int32Array(r.B * r.A);
  for (let b = 0; b < r.B; b++) out.set(responseIds(r, b), b * r.A);
  return out;
}
