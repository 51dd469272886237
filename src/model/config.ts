// Shape of a GPT-2 style model and the head it carries. The actor and the reference policy use the
// tied LM head; the critic reads a scalar value at every position; a learned reward model reads one
// scalar per sequence at its last response token.

export type HeadKind = 'lm' | 'value' | 'reward';
export const HEAD_KINDS: readonly HeadKind[] = ['lm', 'value', 'reward'];

export interface GptConfig {
  vocabSize: number;
  /** Transformer blocks, 1–6. */
  nLayer: number;
  nHead: number;
  /** Model width, 32–256, divisible by nHead. */
  dModel: number;
  /** Learned position embeddings (rows of wpe), ≤ 128. */
  maxSeq: number;
  head: HeadKind;
}

/** The shipped SFT models' size: 2 layers, 2 heads, d_model 64 (about 0.1 M parameters, < 0.5 MB). */
export const SFT_MODEL_DIMS = { nLayer: 2, nHead: 2, dModel: 64 } as const;

/**
 * The shipped SFT model of a task: room for BOS + the longest prompt + the longest response a PPO
 * config allows, rounded up to 8 (rows of wpe beyond the SFT lengths only cost a few KiB).
 */
export function sftModelConfig(vocabSize: number, maxPromptChars: number, maxResponseTokens: number): GptConfig {
  const need = 1 + maxPromptChars + maxResponseTokens;
  return { vocabSize, ...SFT_MODEL_DIMS, maxSeq: Math.min(128, Math.ceil(need / 8) * 8), head: 'lm' };
}

/** LayerNorm epsilon (GPT-2's value). */
export const LN_EPS = 1e-5;

/** Every problem with a config, as readable lines (empty when valid). */
export function gptConfigProblems(c: GptConfig): string[] {
  // A file's JSON may hold anything: null, a number, an array.
  if (typeof c !== 'object' || c === null || Array.isArray(c)) return [`model config must be an object, got ${String(JSON.stringify(c)).slice(0, 40)}`];
  const p: string[] = [];
  const intIn = (name: keyof GptConfig, lo: number, hi: number) => {
    const v = c[name] as number;
    if (!Number.isInteger(v) || v < lo || v > hi) p.push(`${name} = ${String(JSON.stringify(v) ?? v).slice(0, 40)}: expected an integer in [${lo}, ${hi}]`);
  };
  intIn('vocabSize', 3, 1024);
  intIn('nLayer', 1, 6);
  intIn('nHead', 1, 8);
  intIn('dModel', 32, 256);
  intIn('maxSeq', 2, 128);
  if (Number.isInteger(c.dModel) && Number.isInteger(c.nHead) && c.nHead > 0 && c.dModel % c.nHead !== 0) {
    p.push(`dModel = ${c.dModel} is not divisible by nHead = ${c.nHead}`);
  } else if (c.nHead > 0 && c.dModel / c.nHead > 64) {
    p.push(`head width dModel/nHead = ${c.dModel / c.nHead} exceeds 64 (attention kernel limit)`);
  }
  if (!HEAD_KINDS.includes(c.head)) p.push(`head = ${String(JSON.stringify(c.head) ?? c.head).slice(0, 40)}: expected one of ${HEAD_KINDS.join(', ')}`);
  return p;
}

export function validateGptConfig(c: GptConfig): GptConfig {
  const p = gptConfigProblems(c);
  if (p.length > 0) throw new Error(`invalid model config:\n  ${p.join('\n  ')}`);
  return c;
}
