// KV-cached generation: one prefill of the left-padded prompts, then one row per step. Each step's
// logits (B, V) go to sampleVocab, which writes the drawn token, its mask, position and log-prob into
// the (B, Smax) buffers in place, PAD after a row drew one of the EOS ids; the next step reads its
// input column back out of them on the device. The host looks at `finished` every few steps only.
import type { Tensor } from '../../backend/tensor.ts';
import { sampleVocab, type VocabSampleParams } from '../../ops/sampleVocab.ts';
import { sliceSeq } from '../../ops/slice.ts';
import type { HfModel } from './hfModel.ts';
import { packBatch } from './scoring.ts';

export interface GenerateOptions {
  maxNewTokens: number;
  /** Greedy decoding (top-k 1) when true; otherwise temperature, top-p and top-k below. */
  greedy: boolean;
  temperature: number;
  topP: number;
  topK: number; // 0 = every token
  seed: number;
  eosIds: readonly number[];
  padId: number;
  /** Awaited after the prefill is recorded (the bench waits for the GPU there to time prefill and decode apart). */
  afterPrefill?: () => Promise<void>;
}

export interface Generation {
  /** Per row: the generated ids, up to and including the first EOS id. */
  tokens: number[][];
  /** Per row: each token's log-prob under the distribution it was drawn from (0 for greedy). */
  logprobs: number[][];
  /** Per row: whether it ended with an EOS id (else it ran out of maxNewTokens). */
  finished: boolean[];
}

/** Steps between looks at `finished` (each look is a readback). */
const CHECK_EVERY = 8;

export async function generate(model: HfModel, prompts: readonly (readonly number[])[], opts: GenerateOptions): Promise<Generation> {
  const be = model.be;
  const B = prompts.length;
  if (!Number.isInteger(opts.maxNewTokens) || opts.maxNewTokens < 1) throw new Error(`maxNewTokens must be a positive integer, got ${opts.maxNewTokens}`);
  prompts.forEach((p, b) => {
    if (p.length === 0) throw new Error(`prompt ${b} holds no token`);
    for (const id of p) if (!Number.isInteger(id) || id < 0 || id >= model.vocab) throw new Error(`prompt ${b}: token id ${id} is outside [0, ${model.vocab})`);
  });
  const params: VocabSampleParams = {
    temperature: opts.greedy ? 1 : opts.temperature,
    topK: opts.greedy ? 1 : opts.topK,
    topP: opts.greedy ? 1 : opts.topP,
    seed: opts.seed,
    eosIds: opts.eosIds,
    padId: opts.padId,
  };
  const host = packBatch(
    prompts,
    prompts.map(() => []),
    opts.padId,
  );
  const P = host.P;
  const S = P + opts.maxNewTokens;
  const full = (src: ArrayLike<number>, fill: number, Ctor: Int32ArrayConstructor | Float32ArrayConstructor) => {
    const out = new Ctor(B * S).fill(fill);
    for (let b = 0; b < B; b++) for (let s = 0; s < P; s++) out[b * S + s] = src[b * P + s];
    return out;
  };
  const cache = model.newCache(B, S); // refuses S beyond max_position_embeddings before anything else is made
  const sequences = be.tensor(full(host.tokens, opts.padId, Int32Array), [B, S], 'i32');
  const attnMask = be.tensor(full(host.attnMask, 0, Float32Array), [B, S]);
  const positions = be.tensor(full(host.positions, 0, Int32Array), [B, S], 'i32');
  const finished = be.zeros([B], 'i32');
  const logprobs = be.zeros([B, S]);
  const owned: Tensor[] = [sequences, attnMask, positions, finished, logprobs];
  try {
    const step = (tokens: Tensor, pos: Tensor, start: number) =>
      be.scope(() => {
        const last = model.extend(cache, tokens, pos, attnMask, start);
        sampleVocab(be, { logits: model.logits(last), sequences, attnMask, positions, finished, pos: start + tokens.shape[1], params, logprobs });
      });
    be.scope(() => step(be.tensor(host.tokens, [B, P], 'i32'), be.tensor(host.positions, [B, P], 'i32'), 0));
    await opts.afterPrefill?.();
    for (let col = P + 1; col < S; col++) {
      if ((col - P) % CHECK_EVERY === 0 && (await be.read(finished)).every((f) => f !== 0)) break;
      be.scope(() => step(sliceSeq(be, { x: sequences, start: col - 1, len: 1 }), sliceSeq(be, { x: positions, start: col - 1, len: 1 }), col - 1));
    }
    const [seq, mask, lp, fin] = await be.readMany([sequences, attnMask, logprobs, finished]);
    const rows = Array.from({ length: B }, (_, b) => {
      const tokens: number[] = [];
      const lps: number[] = [];
      for (let s = P; s < S && mask[b * S + s] !== 0; s++) {
        tokens.push(seq[b * S + s]);
        lps.push(lp[b * S + s]);
      }
      return { tokens, lps };
    });
    return { tokens: rows.map((r) => r.tokens), logprobs: rows.map((r) => r.lps), finished: Array.from(fin, (f) => f !== 0) };
  } finally {
    model.disposeCache(cache);
    be.dispose(...owned);
  }
}
