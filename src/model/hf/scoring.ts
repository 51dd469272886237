// Scoring responses after prompts, as an RL framework's experience step does: prompts left-padded to
// one width, each response right after its prompt, right-padded; position ids cumsum(mask) − 1 (0 on
// padding, verl's compute_position_id_with_mask); the hidden state at the column before each response
// token scores it. Only the scored rows reach the LM head, which works block by block over the
// vocabulary, so no (B, S, V) logits are ever held.
import type { Tensor } from '../../backend/tensor.ts';
import { gatherRows, sliceSeq } from '../../ops/slice.ts';
import type { HfModel, TokenBatch } from './hfModel.ts';

/** A batch on the host: (B, S) row-major token ids, mask and position ids. */
export interface HostBatch {
  B: number;
  S: number;
  P: number; // the prompts' padded width: response token j of row b sits at column P + j
  tokens: Int32Array;
  attnMask: Float32Array;
  positions: Int32Array;
}

/** prompts left-padded to the longest, each followed by its response, right-padded; pad id `padId`. */
export function packBatch(prompts: readonly (readonly number[])[], responses: readonly (readonly number[])[], padId: number): HostBatch {
  if (prompts.length !== responses.length) throw new Error(`${prompts.length} prompts but ${responses.length} responses`);
  const B = prompts.length;
  const P = Math.max(0, ...prompts.map((p) => p.length));
  const A = Math.max(0, ...responses.map((r) => r.length));
  const S = P + A;
  const tokens = new Int32Array(B * S).fill(padId);
  const attnMask = new Float32Array(B * S);
  const positions = new Int32Array(B * S);
  for (let b = 0; b < B; b++) {
    const p = prompts[b];
    const r = responses[b];
    const row = b * S;
    const first = P - p.length;
    p.forEach((id, i) => {
      tokens[row + first + i] = id;
    });
    r.forEach((id, j) => {
      tokens[row + P + j] = id;
    });
    let n = 0;
    for (let s = 0; s < S; s++) {
      const real = (s >= first && s < P) || (s >= P && s < P + r.length);
      attnMask[row + s] = real ? 1 : 0;
      positions[row + s] = real ? n++ : 0;
    }
  }
  return { B, S, P, tokens, attnMask, positions };
}

/** The host batch as tensors on the model's backend (the caller disposes them). */
export function uploadBatch(model: HfModel, h: HostBatch): TokenBatch {
  const be = model.be;
  return {
    tokens: be.tensor(h.tokens, [h.B, h.S], 'i32'),
    attnMask: be.tensor(h.attnMask, [h.B, h.S]),
    positions: be.tensor(h.positions, [h.B, h.S], 'i32'),
  };
}

/**
 * packBatch for scoring responses: every prompt must hold a token, since the prompt's last scores
 * the first response token. Pad id 0 (the mask keeps padding out).
 */
export function packResponses(prompts: readonly (readonly number[])[], responses: readonly (readonly number[])[]): HostBatch {
  prompts.forEach((p, b) => {
    if (p.length === 0) throw new Error(`prompt ${b} holds no token; the first response token is scored from the prompt's last`);
  });
  return packBatch(prompts, responses, 0);
}

/** packResponses where at least one response must hold a token (a forward whose rows are kept). */
export function packScored(prompts: readonly (readonly number[])[], responses: readonly (readonly number[])[]): HostBatch {
  const h = packResponses(prompts, responses);
  if (h.S === h.P) throw new Error('no response holds a token: nothing to score');
  return h;
}

export interface ResponseScores {
  /** Per row: log p(response[j] | prompt, response[<j]) at temperature T. */
  logprobs: number[][];
  /** Per row: the entropy of each of those distributions. */
  entropy: number[][];
}

/**
 * log p of every response token given everything before it, for B (prompt, response) pairs in one
 * batch; every prompt must hold at least one token (it scores the first response token).
 */
export async function responseLogprobs(
  model: HfModel,
  prompts: readonly (readonly number[])[],
  responses: readonly (readonly number[])[],
  temperature = 1,
): Promise<ResponseScores> {
  const h = packResponses(prompts, responses);
  const vocab = model.vocab;
  for (const ids of [...prompts, ...responses])
    for (const id of ids) if (!Number.isInteger(id) || id < 0 || id >= vocab) throw new Error(`token id ${id} is outside [0, ${vocab})`);
  const rows: number[] = [];
  const targets: number[] = [];
  responses.forEach((r, b) => {
    r.forEach((id, j) => {
      rows.push(b * h.S + h.P + j - 1);
      targets.push(id);
    });
  });
  const empty = (): number[][] => responses.map(() => []);
  if (rows.length === 0) return { logprobs: empty(), entropy: empty() };
  const be = model.be;
  const batch = uploadBatch(model, h);
  const out = be.scope(() => {
    const hidden = model.hidden(batch); // (B·S, D)
    const scored = gatherRows(be, { x: hidden, index: be.tensor(Int32Array.from(rows), [rows.length], 'i32') }); // (N, D)
    return model.rowLogprobs(scored, be.tensor(Int32Array.from(targets), [targets.length], 'i32'), temperature);
  });
  const [lp, ent] = await be.readMany([out.logprobs, out.entropy]);
  be.dispose(out.logprobs, out.entropy, ...batchTensors(batch));
  const split = (flat: Float64Array): number[][] => {
    let at = 0;
    return responses.map((r) => {
      const row = Array.from(flat.subarray(at, at + r.length));
      at += r.length;
      return row;
    });
  };
  return { logprobs: split(lp), entropy: split(ent) };
}

/**
 * The final-normed hidden rows that score each response column (B·A, D), columns past a response's
 * end included, with no layer's intermediates kept (hfBackward.ts responseRowsTaped keeps them for
 * a backward): what a critic's value head reads for the experience. The same numbers as the tape's
 * `scored`, from the same kernels.
 */
export function responseRows(model: HfModel, prompts: readonly (readonly number[])[], responses: readonly (readonly number[])[]): Tensor {
  const h = packScored(prompts, responses);
  const A = h.S - h.P;
  const be = model.be;
  const batch = uploadBatch(model, h);
  const rows = be.scope(() => {
    const hidden = be.reshape(model.hidden(batch), [h.B, h.S, model.arch.dModel]);
    return be.reshape(sliceSeq(be, { x: hidden, start: h.P - 1, len: A }), [h.B * A, model.arch.dModel]);
  });
  be.dispose(...batchTensors(batch));
  return rows;
}

/** Tensors of a TokenBatch, for disposal. */
export function batchTensors(b: TokenBatch): Tensor[] {
  return [b.tokens, b.attnMask, b.positions];
}
