// generation_config.json and tokenizer_config.json: the small files beside the weights that say how
// the model ends a response and how it is prompted. GenerationConfig's own defaults (do_sample
// false, temperature 1, top_p 1, top_k 50: transformers generation/configuration_utils.py) fill
// what a file leaves out; when the file is absent, transformers builds one from config.json's
// token ids, which is what `fromModelConfig` does.
import { quoted } from '../safetensors.ts';
import type { HfArch } from './arch.ts';
import { idList } from './config.ts';

export interface GenerationDefaults {
  /** Every id that ends a response (eos_token_id: an int or a list). */
  eosTokenIds: number[];
  bosTokenId: number | null;
  padTokenId: number | null;
  doSample: boolean;
  temperature: number;
  topP: number;
  topK: number;
  /** max_new_tokens when the file sets it. */
  maxNewTokens: number | null;
  /** Which file these came from. */
  source: 'generation_config.json' | 'config.json';
}

const FILE = 'generation_config.json';

function num(g: Record<string, unknown>, k: string, fallback: number, ok: (v: number) => boolean, range: string): number {
  const v = g[k];
  if (v === undefined || v === null) return fallback;
  if (typeof v !== 'number' || !Number.isFinite(v) || !ok(v)) throw new Error(`${FILE}: ${k} must be ${range}, got ${quoted(v)}`);
  return v;
}

export function generationFromModelConfig(a: HfArch): GenerationDefaults {
  return {
    eosTokenIds: a.eosTokenIds,
    bosTokenId: a.bosTokenId,
    padTokenId: a.padTokenId,
    doSample: false,
    temperature: 1,
    topP: 1,
    topK: 50,
    maxNewTokens: null,
    source: 'config.json',
  };
}

/** A parsed generation_config.json; ids it does not set come from config.json (as transformers merges them). */
export function parseGenerationConfig(raw: unknown, a: HfArch): GenerationDefaults {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new Error(`${FILE} must hold a JSON object`);
  const g = raw as Record<string, unknown>;
  const id = (k: string, fallback: number | null) => {
    const v = g[k];
    if (v === undefined || v === null) return fallback;
    if (!Number.isSafeInteger(v) || (v as number) < 0) throw new Error(`${FILE}: ${k} must be a token id, got ${quoted(v)}`);
    return v as number;
  };
  const eos = idList(g.eos_token_id, 'eos_token_id', FILE);
  const doSample = g.do_sample ?? false;
  if (typeof doSample !== 'boolean') throw new Error(`${FILE}: do_sample must be true or false, got ${quoted(doSample)}`);
  const maxNew = g.max_new_tokens;
  if (maxNew !== undefined && maxNew !== null && (!Number.isSafeInteger(maxNew) || (maxNew as number) < 1)) {
    throw new Error(`${FILE}: max_new_tokens must be a positive integer, got ${quoted(maxNew)}`);
  }
  return {
    eosTokenIds: eos.length > 0 ? eos : a.eosTokenIds,
    bosTokenId: id('bos_token_id', a.bosTokenId),
    padTokenId: id('pad_token_id', a.padTokenId),
    doSample,
    temperature: num(g, 'temperature', 1, (v) => v > 0, 'a number > 0'),
    topP: num(g, 'top_p', 1, (v) => v > 0 && v <= 1, 'in (0, 1]'),
    topK: num(g, 'top_k', 50, (v) => Number.isInteger(v) && v >= 0, 'an integer ≥ 0'),
    maxNewTokens: (maxNew as number | undefined) ?? null,
    source: FILE,
  };
}

export interface TokenizerConfig {
  chatTemplate: string | null;
  bosToken: string | null;
  eosToken: string | null;
  padToken: string | null;
  unkToken: string | null;
  /** The whole object, for @huggingface/tokenizers (it reads a few more fields). */
  raw: Record<string, unknown>;
}

/** A special token as tokenizer_config.json writes it: a string, or an AddedToken object {content, …}. */
function tokenText(v: unknown): string | null {
  if (typeof v === 'string') return v;
  if (typeof v === 'object' && v !== null && typeof (v as { content?: unknown }).content === 'string') return (v as { content: string }).content;
  return null;
}

/** tokenizer_config.json; `chat_template` may be a string or a list of {name, template} (the "default" one is used). */
export function parseTokenizerConfig(raw: unknown, chatTemplateFile: string | null): TokenizerConfig {
  const f = 'tokenizer_config.json';
  if (raw !== null && (typeof raw !== 'object' || Array.isArray(raw))) throw new Error(`${f} must hold a JSON object`);
  const c = (raw ?? {}) as Record<string, unknown>;
  let template: string | null = chatTemplateFile;
  if (template === null && c.chat_template !== undefined && c.chat_template !== null) {
    const t = c.chat_template;
    if (typeof t === 'string') template = t;
    else if (Array.isArray(t)) {
      const named = t.find((x) => (x as { name?: unknown }).name === 'default') ?? t[0];
      const body = (named as { template?: unknown } | undefined)?.template;
      if (typeof body !== 'string') throw new Error(`${f}: chat_template is a list without a {name: "default", template} entry`);
      template = body;
    } else throw new Error(`${f}: chat_template must be a string, got ${quoted(t)}`);
  }
  return { chatTemplate: template, bosToken: tokenText(c.bos_token), eosToken: tokenText(c.eos_token), padToken: tokenText(c.pad_token), unkToken: tokenText(c.unk_token), raw: c };
}
