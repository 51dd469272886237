// The rows of an own-model run file (hfRunFile.ts), one per iteration, each with every response of
// the batch and every token's numbers. Version 2 keeps a row's responses by column: one list per
// field across the row's responses and one across their tokens, the four log-prob and advantage
// columns as little-endian float64 bytes in base64, so each number is the trainer's exactly at
// 8 bytes instead of ~20 digits and a key; a row of 64 answers takes under half of version 1's bytes.
//
//   responses: { prompt: string[R], response: string[R], score: number[R], length: count[R],
//                id: count[T], text: string[T], clip: one of "-uld" per token (null, upper, lower, dual),
//                old, ref, logprob, advantage: base64 of float64[T] }     T = Σ length
//
// Version 1 (read still) kept each response as { prompt, response, score, tokens: [{ id, text,
// old, ref, logprob, advantage, clip }] }.
import type { HfTrainResponse, HfTrainRow, HfTrainToken } from '../rl/hf/hfTrainSettings.ts';
import { count, damaged, fromBase64, isCount, isObject, list, num, shown, str, toBase64 } from './fileChecks.ts';

const ROW_NUMBERS = ['reward_mean', 'kl', 'response_length_mean', 'policy_loss', 'clipfrac', 'seconds'] as const;
const TOKEN_NUMBERS = ['old', 'ref', 'logprob', 'advantage'] as const;
const CLIP_SIDES = ['upper', 'lower', 'dual'] as const;
/** A token's clip side as one character of the `clip` column. */
const CLIP_CHARS: Record<string, HfTrainToken['clip']> = { '-': null, u: 'upper', l: 'lower', d: 'dual' };
const clipChar = (c: HfTrainToken['clip']): string => (c === null ? '-' : c[0]);

/** `xs` as the base64 of their float64 bytes, little-endian (what a reader on any machine decodes). */
function float64Column(xs: readonly number[]): string {
  const view = new DataView(new ArrayBuffer(xs.length * 8));
  for (const [i, x] of xs.entries()) view.setFloat64(i * 8, x, true);
  return toBase64(new Uint8Array(view.buffer));
}

function readFloat64Column(x: unknown, n: number, field: string): number[] {
  const bytes = typeof x === 'string' ? fromBase64(x) : null;
  if (bytes === null) throw damaged(field, `expected ${n} float64 numbers as base64, found ${shown(x)}`);
  if (bytes.length !== n * 8) throw damaged(field, `${bytes.length} bytes, but ${n} tokens take ${n * 8}`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return Array.from({ length: n }, (_, i) => {
    const v = view.getFloat64(i * 8, true);
    if (!Number.isFinite(v)) throw damaged(`${field}[${i}]`, `expected a finite number, found ${v}`);
    return v;
  });
}

/** A row as version 2 writes it. */
export function rowColumns(row: HfTrainRow): Record<string, unknown> {
  const { responses, ...numbers } = row;
  const tokens = responses.flatMap((r) => r.tokens);
  return {
    ...numbers,
    responses: {
      prompt: responses.map((r) => r.prompt),
      response: responses.map((r) => r.response),
      score: responses.map((r) => r.score),
      length: responses.map((r) => r.tokens.length),
      id: tokens.map((t) => t.id),
      text: tokens.map((t) => t.text),
      clip: tokens.map((t) => clipChar(t.clip)).join(''),
      ...Object.fromEntries(TOKEN_NUMBERS.map((k) => [k, float64Column(tokens.map((t) => t[k]))])),
    },
  };
}

/** A list at `field` of exactly `n` items (the responses' or tokens' count). */
function column(x: unknown, n: number, field: string): unknown[] {
  const xs = list(x, field);
  if (xs.length !== n) throw damaged(field, `${xs.length} items, but there are ${n}`);
  return xs;
}

function readColumnResponses(x: unknown, f: string): HfTrainResponse[] {
  if (!isObject(x)) throw damaged(f, 'expected the responses by column: { prompt, response, score, length, id, text, clip, old, ref, logprob, advantage }');
  const prompts = list(x.prompt, `${f}.prompt`).map((v, i) => str(v, `${f}.prompt[${i}]`));
  const n = prompts.length;
  const responses = column(x.response, n, `${f}.response`).map((v, i) => str(v, `${f}.response[${i}]`));
  const scores = column(x.score, n, `${f}.score`).map((v, i) => num(v, `${f}.score[${i}]`));
  const lengths = column(x.length, n, `${f}.length`).map((v, i) => count(v, `${f}.length[${i}]`));
  const nTokens = lengths.reduce((a, b) => a + b, 0);
  const ids = column(x.id, nTokens, `${f}.id`).map((v, i) => count(v, `${f}.id[${i}]`));
  const texts = column(x.text, nTokens, `${f}.text`).map((v, i) => str(v, `${f}.text[${i}]`, 200));
  if (typeof x.clip !== 'string' || x.clip.length !== nTokens) throw damaged(`${f}.clip`, `expected ${nTokens} characters of "-uld", found ${shown(x.clip)}`);
  const clip = x.clip;
  const clips = Array.from(clip, (c, i) => {
    if (!(c in CLIP_CHARS)) throw damaged(`${f}.clip`, `character ${i} is ${shown(c)}, not one of "-uld"`);
    return CLIP_CHARS[c];
  });
  const numbers = Object.fromEntries(TOKEN_NUMBERS.map((k) => [k, readFloat64Column(x[k], nTokens, `${f}.${k}`)])) as Record<(typeof TOKEN_NUMBERS)[number], number[]>;
  let at = 0;
  return prompts.map((prompt, i) => {
    const tokens = Array.from({ length: lengths[i] }, (_, j): HfTrainToken => {
      const k = at + j;
      return { id: ids[k], text: texts[k], old: numbers.old[k], ref: numbers.ref[k], logprob: numbers.logprob[k], advantage: numbers.advantage[k], clip: clips[k] };
    });
    at += lengths[i];
    return { prompt, response: responses[i], score: scores[i], tokens };
  });
}

function readToken(x: unknown, f: string): HfTrainToken {
  if (!isObject(x)) throw damaged(f, 'expected a token');
  const t: HfTrainToken = { id: count(x.id, `${f}.id`), text: str(x.text, `${f}.text`, 200), old: 0, ref: 0, logprob: 0, advantage: 0, clip: null };
  for (const k of TOKEN_NUMBERS) t[k] = num(x[k], `${f}.${k}`);
  if (x.clip !== null && !CLIP_SIDES.includes(x.clip as (typeof CLIP_SIDES)[number]))
    throw damaged(`${f}.clip`, `expected null or one of ${CLIP_SIDES.join(', ')}, found ${shown(x.clip)}`);
  t.clip = x.clip as HfTrainToken['clip'];
  return t;
}

function readResponse(x: unknown, f: string): HfTrainResponse {
  if (!isObject(x)) throw damaged(f, 'expected a response');
  return {
    prompt: str(x.prompt, `${f}.prompt`),
    response: str(x.response, `${f}.response`),
    score: num(x.score, `${f}.score`),
    tokens: list(x.tokens, `${f}.tokens`).map((t, i) => readToken(t, `${f}.tokens[${i}]`)),
  };
}

/** The rows of a file of `version`, one per iteration, their iterations counting up by one to `iterations`. */
export function readRows(x: unknown, iterations: number, version: 1 | 2): HfTrainRow[] {
  const rows = list(x, 'rows').map((r, i): HfTrainRow => {
    const f = `rows[${i}]`;
    if (!isObject(r) || !isCount(r.iter)) throw damaged(f, 'expected { iter, reward_mean, …, responses }');
    const row = { iter: r.iter, value_loss: r.value_loss === null ? null : num(r.value_loss, `${f}.value_loss`) } as HfTrainRow;
    for (const k of ROW_NUMBERS) row[k] = num(r[k], `${f}.${k}`);
    row.responses = version === 2 ? readColumnResponses(r.responses, `${f}.responses`) : list(r.responses, `${f}.responses`).map((v, j) => readResponse(v, `${f}.responses[${j}]`));
    if (i > 0 && r.iter !== (x as { iter: number }[])[i - 1].iter + 1) throw damaged(`${f}.iter`, `${r.iter} does not follow iteration ${(x as { iter: number }[])[i - 1].iter}`);
    return row;
  });
  const last = rows.at(-1)?.iter;
  if (last !== undefined && last !== iterations) throw damaged('iterations', `${iterations}, but the last row is iteration ${last}`);
  return rows;
}
