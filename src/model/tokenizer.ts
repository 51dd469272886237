// Character-level tokenizer shared by every task: three special ids, then one id per character of
// the task's alphabet. Ids are stable for a given alphabet string, which is what a checkpoint
// stores (metadata "alphabet") so that a saved model decodes the same way after reload.

export const PAD_ID = 0;
export const BOS_ID = 1;
export const EOS_ID = 2;
const N_SPECIAL = 3;

export interface DecodeOptions {
  /** Stop at the first EOS (the rest of a right-padded response is not text). Default true. */
  stopAtEos?: boolean;
}

export class CharTokenizer {
  readonly padId = PAD_ID;
  readonly bosId = BOS_ID;
  readonly eosId = EOS_ID;
  /** Deduplicated alphabet in first-seen order; character i has id N_SPECIAL + i. */
  readonly alphabet: string;
  readonly vocabSize: number;
  private readonly idOf: Map<string, number>;
  private readonly chars: string[];

  constructor(alphabet: string) {
    // Spread by code point so a surrogate pair is one character, not two broken halves.
    this.chars = [...new Set([...alphabet])];
    if (this.chars.length === 0) throw new Error('tokenizer alphabet is empty');
    this.alphabet = this.chars.join('');
    this.idOf = new Map(this.chars.map((c, i) => [c, N_SPECIAL + i]));
    this.vocabSize = N_SPECIAL + this.chars.length;
  }

  encode(text: string): number[] {
    const ids: number[] = [];
    let pos = 0;
    for (const c of text) {
      const id = this.idOf.get(c);
      if (id === undefined) {
        throw new Error(`unknown character ${JSON.stringify(c)} at position ${pos} (allowed: ${JSON.stringify(this.alphabet)})`);
      }
      ids.push(id);
      pos++;
    }
    return ids;
  }

  /** `[BOS, ...chars]`: what the policy conditions on before generating a response. */
  encodePrompt(text: string): number[] {
    return [BOS_ID, ...this.encode(text)];
  }

  decode(ids: ArrayLike<number>, opts: DecodeOptions = {}): string {
    const stopAtEos = opts.stopAtEos ?? true;
    let out = '';
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i];
      if (id === EOS_ID) {
        if (stopAtEos) break;
        continue;
      }
      if (id === PAD_ID || id === BOS_ID) continue;
      const c = this.chars[id - N_SPECIAL];
      if (c === undefined) throw new Error(`token id ${id} is outside the vocabulary (size ${this.vocabSize})`);
      out += c;
    }
    return out;
  }
}

export interface LeftPaddedBatch {
  /** (B, P) token ids, PAD on the left of each row. */
  tokens: number[];
  /** (B, P) 1 for real tokens, 0 for padding. */
  attnMask: number[];
  /** (B, P) position ids: cumsum(mask) − 1, clamped at 0 on padding, so real tokens start at 0. */
  positions: number[];
  /** Padded prompt width P. */
  width: number;
}

/**
 * Left-pads prompts to a common width so that every row's last prompt token sits in column P−1
 * and generation appends in lockstep. `width` defaults to the longest prompt and must be at least that.
 */
export function leftPadBatch(prompts: number[][], width?: number): LeftPaddedBatch {
  const longest = prompts.reduce((m, p) => Math.max(m, p.length), 0);
  const P = width ?? longest;
  if (P < longest) throw new Error(`leftPadBatch width ${P} is shorter than the longest prompt (${longest})`);
  const B = prompts.length;
  const tokens = new Array<number>(B * P).fill(PAD_ID);
  const attnMask = new Array<number>(B * P).fill(0);
  const positions = new Array<number>(B * P).fill(0);
  for (let b = 0; b < B; b++) {
    const p = prompts[b];
    const start = P - p.length;
    for (let j = 0; j < p.length; j++) {
      tokens[b * P + start + j] = p[j];
      attnMask[b * P + start + j] = 1;
      positions[b * P + start + j] = j;
    }
  }
  return { tokens, attnMask, positions, width: P };
}
