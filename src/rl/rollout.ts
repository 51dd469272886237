// Rollout: promptsPerBatch prompts × samplesPerPrompt samples from the actor (KV-cache sampling on
// the device), then ONE readback of the finished sequences (alone, or with the previous
// iteration's statistics when sampled ahead), which the rule reward and the display need on the
// host. The device tensors stay where they are for the experience. Sequence b belongs to group
// (prompt) ⌊b / samples⌋.
import type { Backend } from '../backend/backend.ts';
import type { Tensor } from '../backend/tensor.ts';
import { generate, disposeRollout } from '../model/generate.ts';
import type { SamplingModel } from '../model/sequenceModel.ts';
import { leftPadBatch, type CharTokenizer } from '../model/tokenizer.ts';
import type { Task, TaskSample } from '../tasks/task.ts';
import { Rng } from '../util/rng.ts';
import { promptSeed } from '../util/seedStreams.ts';
import type { PpoConfig } from './config.ts';

/** Host copy of one rollout: everything the experience needs, when it has to be uploaded. */
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
  /** The sampler's log-probs π_rollout of each response token (B, A), 0 after the end; absent when not kept. */
  logprobs?: Float32Array | null;
  /**
   * ReMax's greedy responses (estimator remax): one per group, decoded by argmax from the same actor
   * with the same prompts, scored only to give the group's reward baseline, never trained on. Its
   * `group` holds the group id (of this batch) each greedy row stands for. Absent otherwise.
   */
  greedy?: RolloutBatch | null;
}

/** One prompt per group, in order of first appearance, with its group id: the greedy batch's rows. */
export function groupPrompts(prompts: string[], group: ArrayLike<number>): { prompts: string[]; group: Int32Array } {
  const seen = new Map<number, string>();
  for (let b = 0; b < prompts.length; b++) if (!seen.has(group[b])) seen.set(group[b], prompts[b]);
  return { prompts: [...seen.values()], group: Int32Array.from(seen.keys()) };
}

/** Greedy decoding, as the evaluator's greedySamples (top-k 1: argmax of the logits; no draw is used). */
export const GREEDY_SETTINGS = { temperature: 1, topK: 1, topP: 1 } as const;

/**
 * The reward baseline of every sequence (B): the score of its group's greedy response (verl
 * ray_trainer: the greedy batch's reward, repeated over the rollout.n samples of its prompt).
 * greedyScores (G) are the scores of r.greedy's rows.
 */
export function greedyBaselines(r: RolloutBatch, greedyScores: ArrayLike<number>): Float64Array {
  const g = r.greedy;
  if (!g) throw new Error('greedyBaselines: the rollout has no greedy responses');
  const row = new Map<number, number>(Array.from(g.group, (id, i) => [id, i]));
  return Float64Array.from(r.group, (id) => {
    const i = row.get(id);
    if (i === undefined) throw new Error(`greedyBaselines: no greedy response for group ${id}`);
    return greedyScores[i];
  });
}

/** Prompt width of a task: BOS + the longest prompt, fixed so every iteration has the same shapes. */
export function promptWidth(task: Task): number {
  return 1 + task.maxPromptChars;
}

/**
 * The prompts of iteration `iter`; `round` > 0 draws the extra rounds of dynamic sampling
 * (seedStreams.promptSeed).
 */
export function iterationPrompts(task: Task, cfg: PpoConfig, iter: number, round = 0): { prompts: string[]; group: Int32Array } {
  const rng = new Rng(promptSeed(cfg.seed, iter, round));
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

/** The sampler's own device tensors of a rollout: the experience takes them as they are. */
export interface RolloutTensors {
  sequences: Tensor; // (B, P+A) i32
  attnMask: Tensor; // (B, P+A) f32
  positions: Tensor; // (B, P+A) i32
  actionMask: Tensor; // (B, A) f32
  logprobs: Tensor | null; // (B, A) f32 π_rollout; null for a host batch without them
}

/** A rollout read back to the host, with its tensors still on the device (null: on the host only). */
export interface SampledRollout {
  batch: RolloutBatch;
  device: RolloutTensors | null;
}

export function disposeRolloutTensors(be: Backend, t: RolloutTensors | null): void {
  if (t) be.dispose(t.sequences, t.attnMask, t.positions, t.actionMask, t.logprobs);
}

/**
 * A rollout recorded on the device and not yet read: `tensors` go into a readback (alone, or with
 * other results in one readMany), and `finish` turns their values into the host batch, keeping
 * the device tensors the experience needs. `dispose` frees a rollout that is never finished.
 */
export interface RecordedRollout {
  tensors: Tensor[];
  finish(host: readonly ArrayLike<number>[]): SampledRollout;
  dispose(): void;
}

/**
 * Records the rollout; with `greedy` (ReMax) also one greedy response per group from the same actor,
 * read back in the same readback and freed on the device at once (only its reward is used).
 */
export function recordRollout(
  actor: SamplingModel,
  tok: CharTokenizer,
  prompts: string[],
  group: Int32Array,
  P: number,
  A: number,
  s: SampleSettings,
  greedy = false,
): RecordedRollout {
  const B = prompts.length;
  const pb = leftPadBatch(
    prompts.map((p) => tok.encodePrompt(p)),
    P,
  );
  const r = generate(actor, { ...pb, B, P }, A, { ...s, eosId: tok.eosId, padId: tok.padId });
  const g = greedy ? recordGreedy(actor, tok, groupPrompts(prompts, group), P, A, s.seed) : null;
  return {
    tensors: [r.sequences, r.attnMask, r.positions, r.finished, r.logprobs, ...(g?.tensors ?? [])],
    finish: ([seq, mask, pos, fin, lp, ...greedyHost]) => {
      actor.be.dispose(r.finished); // the host's alone
      return {
        batch: {
          B,
          P,
          A,
          prompts,
          group,
          sequences: Int32Array.from(seq),
          attnMask: Float32Array.from(mask),
          positions: Int32Array.from(pos),
          finished: Int32Array.from(fin),
          logprobs: Float32Array.from(lp),
          greedy: g ? g.finish(greedyHost) : null,
        },
        device: { sequences: r.sequences, attnMask: r.attnMask, positions: r.positions, actionMask: r.actionMask, logprobs: r.logprobs },
      };
    },
    dispose: () => {
      disposeRollout(actor, r);
      g?.dispose();
    },
  };
}

/** The greedy responses of `rows` (one prompt per group), recorded; `finish` frees their device tensors. */
function recordGreedy(actor: SamplingModel, tok: CharTokenizer, rows: { prompts: string[]; group: Int32Array }, P: number, A: number, seed: number) {
  const G = rows.prompts.length;
  const pb = leftPadBatch(
    rows.prompts.map((p) => tok.encodePrompt(p)),
    P,
  );
  const r = generate(actor, { ...pb, B: G, P }, A, { ...GREEDY_SETTINGS, seed, eosId: tok.eosId, padId: tok.padId });
  return {
    tensors: [r.sequences, r.attnMask, r.positions, r.finished],
    finish: ([seq, mask, pos, fin]: readonly ArrayLike<number>[]): RolloutBatch => {
      disposeRollout(actor, r); // not trained on: nothing stays on the device
      return {
        B: G,
        P,
        A,
        prompts: rows.prompts,
        group: rows.group,
        sequences: Int32Array.from(seq),
        attnMask: Float32Array.from(mask),
        positions: Int32Array.from(pos),
        finished: Int32Array.from(fin),
        logprobs: null,
      };
    },
    dispose: () => disposeRollout(actor, r),
  };
}

/** Samples and reads the greedy responses of `r`'s groups now (one readback): a rollout that came without them. */
export async function sampleGreedy(actor: SamplingModel, tok: CharTokenizer, r: RolloutBatch, seed: number): Promise<RolloutBatch> {
  const g = recordGreedy(actor, tok, groupPrompts(r.prompts, r.group), r.P, r.A, seed);
  try {
    return g.finish(await actor.be.readMany(g.tensors));
  } catch (e) {
    g.dispose();
    throw e;
  }
}

/**
 * The rows of `parts` listed by (part, row) pairs, in order, as one batch; `group` is renumbered so
 * rows keep sharing a group exactly when they shared one in their part. All parts share P and A.
 */
export function concatRows(parts: RolloutBatch[], rows: { part: number; row: number }[]): RolloutBatch {
  const { P, A } = parts[0];
  const S = P + A;
  const B = rows.length;
  const withLp = parts.every((p) => p.logprobs);
  const out: RolloutBatch = {
    B,
    P,
    A,
    prompts: [],
    group: new Int32Array(B),
    sequences: new Int32Array(B * S),
    attnMask: new Float32Array(B * S),
    positions: new Int32Array(B * S),
    finished: new Int32Array(B),
    logprobs: withLp ? new Float32Array(B * A) : null,
  };
  const groupIds = new Map<string, number>();
  rows.forEach(({ part, row }, b) => {
    const src = parts[part];
    if (src.P !== P || src.A !== A) throw new Error('concatRows: parts differ in shape');
    const key = `${part}:${src.group[row]}`;
    if (!groupIds.has(key)) groupIds.set(key, groupIds.size);
    out.group[b] = groupIds.get(key)!;
    out.prompts.push(src.prompts[row]);
    out.sequences.set(src.sequences.subarray(row * S, (row + 1) * S), b * S);
    out.attnMask.set(src.attnMask.subarray(row * S, (row + 1) * S), b * S);
    out.positions.set(src.positions.subarray(row * S, (row + 1) * S), b * S);
    out.finished[b] = src.finished[row];
    if (out.logprobs) out.logprobs.set(src.logprobs!.subarray(row * A, (row + 1) * A), b * A);
  });
  if (parts.every((p) => p.greedy)) {
    // ReMax: the greedy row of every group kept, under the group's new id.
    const picks: { part: number; row: number; id: number }[] = [];
    for (const [key, id] of groupIds) {
      const [part, old] = key.split(':').map(Number);
      const row = parts[part].greedy!.group.indexOf(old);
      if (row < 0) throw new Error(`concatRows: no greedy response for group ${old} of part ${part}`);
      picks.push({ part, row, id });
    }
    const greedy = concatRows(
      picks.map((p) => parts[p.part].greedy!),
      picks.map((p, i) => ({ part: i, row: p.row })),
    );
    greedy.group = Int32Array.from(picks, (p) => p.id);
    out.greedy = greedy;
  }
  return out;
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
