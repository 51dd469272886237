// A small byte-level BPE trainer that writes a tokenizer.json @huggingface/tokenizers (and the Python
// `tokenizers` library) load: the tokenizer of the synthetic test folders and of the small chat
// model the page ships. Byte-level BPE (GPT-2, Llama 3, Qwen): text → pre-tokenized words →
// UTF-8 bytes, each byte shown as one printable character (GPT-2's byte↔unicode table, so "Ġ" is a
// space) → merges of the most frequent adjacent pair, learned greedily, applied by rank at encode time.
//
// Two pre-tokenizer styles:
//   gpt2   ByteLevel with its built-in regex (GPT-2's 's|'t|…| ?\p{L}+| ?\p{N}+|…)
//   qwen2  NFC, then Split on Qwen2's regex (digits one by one, case-insensitive contractions) and
//          ByteLevel without its own regex, as Qwen2/Qwen3's tokenizer.json
// Special tokens (<|endoftext|>, <|im_start|>, <|im_end|>) are added tokens after the BPE ids.

export type PreTokenizerStyle = 'gpt2' | 'qwen2';

export interface BpeTrainOptions {
  /** Byte symbols (256) + merges; special tokens come on top. */
  vocabSize: number;
  style: PreTokenizerStyle;
  specialTokens: string[];
  /** A pair seen fewer times than this is not merged (training stops). Default 2. */
  minFrequency?: number;
}

export interface TrainedBpe {
  /** A tokenizer.json object (serialise with JSON.stringify). */
  tokenizerJson: Record<string, unknown>;
  /** token → id, specials included. */
  vocab: Map<string, number>;
  merges: [string, string][];
}

/** GPT-2's table: printable bytes map to themselves, the others to U+0100 onwards, in byte order. */
export function bytesToUnicode(): string[] {
  const keep: number[] = [];
  for (let b = 0x21; b <= 0x7e; b++) keep.push(b);
  for (let b = 0xa1; b <= 0xac; b++) keep.push(b);
  for (let b = 0xae; b <= 0xff; b++) keep.push(b);
  const table = new Array<string>(256);
  for (const b of keep) table[b] = String.fromCodePoint(b);
  let n = 0;
  for (let b = 0; b < 256; b++) if (table[b] === undefined) table[b] = String.fromCodePoint(256 + n++);
  return table;
}

/** The byte order of GPT-2's first 256 ids: printable bytes first, then the rest. */
function baseByteOrder(): number[] {
  const order: number[] = [];
  for (let b = 0x21; b <= 0x7e; b++) order.push(b);
  for (let b = 0xa1; b <= 0xac; b++) order.push(b);
  for (let b = 0xae; b <= 0xff; b++) order.push(b);
  for (let b = 0; b < 256; b++) if (!order.includes(b)) order.push(b);
  return order;
}

/** GPT-2's pre-tokenizer regex (ByteLevel use_regex), as JavaScript. */
export const GPT2_SPLIT = /'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu;
/** Qwen2's pre-tokenizer regex as tokenizer.json writes it (Oniguruma syntax). */
export const QWEN2_SPLIT_PATTERN = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
/** The same pattern in JavaScript (no inline (?i:…) groups: the contractions spelled out in both cases). */
export const QWEN2_SPLIT = /'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD]|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+/gu;

/** Words of a text as the style's pre-tokenizer cuts it (specials removed first by the caller). */
export function preTokenize(text: string, style: PreTokenizerStyle): string[] {
  const t = style === 'qwen2' ? text.normalize('NFC') : text;
  return t.match(style === 'qwen2' ? QWEN2_SPLIT : GPT2_SPLIT) ?? [];
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

interface Word {
  syms: number[];
  count: number;
}

const pairKey = (a: number, b: number) => a * 1048576 + b;

export function trainByteLevelBpe(corpus: string | string[], opts: BpeTrainOptions): TrainedBpe {
  const { vocabSize, style, specialTokens } = opts;
  const minFrequency = opts.minFrequency ?? 2;
  if (!Number.isInteger(vocabSize) || vocabSize < 256 || vocabSize > 1_000_000) throw new Error(`vocabSize must be an integer in [256, 1000000], got ${vocabSize}`);
  const byteChar = bytesToUnicode();
  const enc = new TextEncoder();

  // Base symbols: the 256 byte characters in GPT-2's id order.
  const tokens: string[] = baseByteOrder().map((b) => byteChar[b]);
  const idOf = new Map<string, number>(tokens.map((t, i) => [t, i]));
  const symOfByte = new Array<number>(256);
  for (let b = 0; b < 256; b++) symOfByte[b] = idOf.get(byteChar[b])!;

  // Word counts (specials cut out of the text so they are never learned as BPE pieces).
  const texts = Array.isArray(corpus) ? corpus : [corpus];
  const specialRe = specialTokens.length > 0 ? new RegExp(specialTokens.map(escapeRegExp).join('|'), 'g') : null;
  const counts = new Map<string, number>();
  for (const text of texts) {
    for (const piece of specialRe ? text.split(specialRe) : [text]) {
      for (const w of preTokenize(piece, style)) counts.set(w, (counts.get(w) ?? 0) + 1);
    }
  }
  const words: Word[] = [...counts.entries()].sort((x, y) => (x[0] < y[0] ? -1 : 1)).map(([w, count]) => ({ syms: [...enc.encode(w)].map((b) => symOfByte[b]), count }));

  const pairCount = new Map<number, number>();
  const pairWords = new Map<number, Set<number>>();
  const addPairs = (wi: number, sign: number) => {
    const { syms, count } = words[wi];
    for (let i = 0; i + 1 < syms.length; i++) {
      const k = pairKey(syms[i], syms[i + 1]);
      pairCount.set(k, (pairCount.get(k) ?? 0) + sign * count);
      if (sign > 0) {
        const s = pairWords.get(k);
        if (s) s.add(wi);
        else pairWords.set(k, new Set([wi]));
      }
    }
  };
  for (let wi = 0; wi < words.length; wi++) addPairs(wi, 1);

  const merges: [string, string][] = [];
  while (tokens.length < vocabSize) {
    // Most frequent pair; ties broken by the smaller ids so the result does not depend on Map order.
    let best = -1;
    let bestCount = 0;
    for (const [k, c] of pairCount) {
      if (c > bestCount || (c === bestCount && c > 0 && k < best)) {
        best = k;
        bestCount = c;
      }
    }
    if (best < 0 || bestCount < minFrequency) break;
    const a = Math.floor(best / 1048576);
    const b = best % 1048576;
    const merged = tokens[a] + tokens[b];
    let id = idOf.get(merged);
    if (id === undefined) {
      id = tokens.length;
      tokens.push(merged);
      idOf.set(merged, id);
    }
    merges.push([tokens[a], tokens[b]]);
    for (const wi of pairWords.get(best) ?? []) {
      const w = words[wi];
      addPairs(wi, -1);
      const next: number[] = [];
      for (let i = 0; i < w.syms.length; i++) {
        if (i + 1 < w.syms.length && w.syms[i] === a && w.syms[i + 1] === b) {
          next.push(id);
          i++;
        } else next.push(w.syms[i]);
      }
      w.syms = next;
      addPairs(wi, 1);
    }
    pairWords.delete(best);
    pairCount.delete(best);
  }

  const vocab = new Map<string, number>(tokens.map((t, i) => [t, i]));
  const added = specialTokens.map((content, i) => {
    const id = tokens.length + i;
    vocab.set(content, id);
    return { id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true };
  });
  const byteLevel = (useRegex: boolean) => ({ type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: useRegex });
  const tokenizerJson: Record<string, unknown> = {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: added,
    normalizer: style === 'qwen2' ? { type: 'NFC' } : null,
    pre_tokenizer:
      style === 'qwen2'
        ? { type: 'Sequence', pretokenizers: [{ type: 'Split', pattern: { Regex: QWEN2_SPLIT_PATTERN }, behavior: 'Isolated', invert: false }, byteLevel(false)] }
        : byteLevel(true),
    post_processor: byteLevel(false),
    decoder: byteLevel(false),
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: '',
      end_of_word_suffix: '',
      fuse_unk: false,
      byte_fallback: false,
      vocab: Object.fromEntries(tokens.map((t, i) => [t, i])),
      // "a b" strings, which every version of the tokenizers library reads (pairs as arrays only from
      // 0.20); byte-level pieces never hold a space (it is "Ġ"), so the split is unambiguous
      merges: merges.map(([a, b]) => `${a} ${b}`),
    },
  };
  return { tokenizerJson, vocab, merges };
}
