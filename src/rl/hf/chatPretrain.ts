// The shipped small chat model, made by the project's own code from a seed: a Qwen3-architecture
// model (per-head q/k norm, head_dim × heads ≠ hidden, grouped-query attention, tied head) with its
// own byte-level BPE tokenizer (Qwen2's pre-tokenizer: digits one by one) and ChatML template,
// trained from random weights by supervised fine-tuning on the chat arithmetic task written as
// chat turns: the user asks "What is 23 + 48? Answer with the number.", the assistant answers
// "71<|im_end|>". Full training (every weight, hfBackward.ts backwardToWeights), loss = mean −log p
// over the answer tokens (EOS included), in the two phases of the character model's arithmetic
// recipe (src/tasks/arithmetic.ts): a tutor (every answer right; AdamW with linear warm-up and cosine
// decay), then a sloppy student who forgets the units' carry FORGET_CARRY_RATE of the time (29 + 57
// → "76"; constant lr): the model keeps some of the carry it learned but answers without it, which
// is what RL with a verifiable reward can fix by moving probability, not by teaching addition anew.
// Held-out operand pairs (chatArithmetic.ts) never appear in training; the greedy held-out accuracy
// is measured on the written folder's weights, as a visitor will load them.
import type { Backend } from '../../backend/backend.ts';
import { trainByteLevelBpe } from '../../model/hf/bpeTrain.ts';
import { MemoryFolder } from '../../model/hf/folder.ts';
import { flatOptimizerStep, zeroFlatGrads } from '../../model/hf/flatOptimizer.ts';
import { disposeFullTrainable, fullWeightValues, newFullTrainable } from '../../model/hf/fullParams.ts';
import { backwardToWeights, disposeTape, responseLogprobsTaped } from '../../model/hf/hfBackward.ts';
import { HfModel } from '../../model/hf/hfModel.ts';
import { openHfFolder } from '../../model/hf/open.ts';
import { memorySink, SPECIAL_TOKENS, type SyntheticDims, type SyntheticSpec, writeSynthetic } from '../../model/hf/synthetic.ts';
import { HfTokenizer } from '../../model/hf/tokenizer.ts';
import { valuesByKey } from '../../model/hf/trainedValues.ts';
import { chatArithmeticEvalPrompts, chatArithmeticPrompt, chatArithmeticScore, chatArithmeticTrainPrompt, parseChatArithmetic } from '../../tasks/chatArithmetic.ts';
import { FORGET_CARRY_RATE, hasCarry, isHeldOutPair } from '../../tasks/arithmetic.ts';
import { Rng } from '../../util/rng.ts';
import { greedyEvaluation, type HfEvalResult } from './hfEval.ts';

/** The shipped model's shape: 2 layers, 96 wide, 4 heads of 32 (128 ≠ 96, as Qwen3), 2 KV heads. */
export const CHAT_MODEL_DIMS: SyntheticDims = { nLayer: 2, dModel: 96, nHead: 4, nKvHead: 2, headDim: 32, dFf: 256, vocab: 320, maxPositions: 128 };
/** Byte symbols + merges of its tokenizer (the three ChatML specials come on top). */
export const CHAT_BPE_SIZE = 300;

export interface ChatPretrainOptions {
  seed: number;
  /** The tutor phase's steps, peak lr and warm-up. */
  steps: number;
  batch: number;
  lr: number;
  warmup: number;
  /** The sloppy student's steps (0: none) and its constant lr. */
  sloppySteps: number;
  sloppyLr: number;
  dims?: SyntheticDims;
  /** Held-out prompts of the final greedy evaluation. */
  evalPrompts: number;
  onStep?: (p: { phase: 'tutor' | 'sloppy'; step: number; steps: number; loss: number; lr: number }) => void;
}

export const CHAT_PRETRAIN_DEFAULTS: Omit<ChatPretrainOptions, 'seed'> = { steps: 600, batch: 32, lr: 3e-3, warmup: 50, sloppySteps: 300, sloppyLr: 1e-3, evalPrompts: 200 };

export interface ChatPretrainResult {
  /** The folder as written (BF16 weights), ready for openHfFolder or a directory. */
  folder: MemoryFolder;
  /** Mean answer-token NLL of each step. */
  losses: number[];
  evaluation: HfEvalResult;
}

/** The tokenizer's training text: every training pair as a ChatML exchange, in a seeded order. */
export function chatCorpus(seed: number): string[] {
  const lines: string[] = [];
  for (let a = 0; a <= 99; a++)
    for (let b = 0; b <= 99; b++) if (!isHeldOutPair(a, b)) lines.push(`<|im_start|>user\n${chatArithmeticPrompt(a, b)}<|im_end|>\n<|im_start|>assistant\n${a + b}<|im_end|>\n`);
  return new Rng(seed).shuffle(lines);
}

/** lr at step s (0-based): linear warm-up, then cosine to a tenth. */
export function chatLr(o: Pick<ChatPretrainOptions, 'lr' | 'warmup' | 'steps'>, s: number): number {
  if (s < o.warmup) return (o.lr * (s + 1)) / o.warmup;
  const t = (s - o.warmup) / Math.max(1, o.steps - o.warmup);
  return o.lr * (0.1 + 0.45 * (1 + Math.cos(Math.PI * t)));
}

function spec(seed: number, dims: SyntheticDims, tokenizer: Record<string, unknown>): SyntheticSpec {
  return { family: 'qwen3', dtype: 'F32', shards: 1, seed, dims, tied: true, tokenizer };
}

export async function pretrainChatModel(be: Backend, o: ChatPretrainOptions): Promise<ChatPretrainResult> {
  const dims = o.dims ?? CHAT_MODEL_DIMS;
  const tokenizerJson = trainByteLevelBpe(chatCorpus(o.seed), { vocabSize: CHAT_BPE_SIZE, style: 'qwen2', specialTokens: SPECIAL_TOKENS }).tokenizerJson;
  const init = new MemoryFolder('chat-model-init');
  await writeSynthetic(spec(o.seed, dims, tokenizerJson), memorySink(init));
  const info = await openHfFolder(init);
  const tok = new HfTokenizer(info.tokenizerJson, info.tokenizerConfig, info.generation);
  const imEnd = tok.idOf('<|im_end|>');
  if (imEnd === null) throw new Error('the chat tokenizer lost <|im_end|>');
  const loaded = await HfModel.load(be, init, info, 'f32');
  const t = await newFullTrainable(loaded);
  loaded.dispose();
  const promptIds = new Map<string, number[]>();
  const idsOf = (prompt: string) => {
    let ids = promptIds.get(prompt);
    if (!ids) {
      ids = tok.encodeChat(prompt);
      promptIds.set(prompt, ids);
    }
    return ids;
  };
  const rng = new Rng(o.seed ^ 0x5eed);
  const losses: number[] = [];
  const total = o.steps + o.sloppySteps;
  try {
    for (let step = 0; step < total; step++) {
      const phase = step < o.steps ? 'tutor' : 'sloppy';
      const prompts = Array.from({ length: o.batch }, () => chatArithmeticTrainPrompt(rng));
      const answers = prompts.map((p) => {
        const { a, b } = parseChatArithmetic(p)!;
        const forgot = phase === 'sloppy' && hasCarry(a, b) && rng.next() < FORGET_CARRY_RATE;
        return [...tok.encode(String(a + b - (forgot ? 10 : 0)), { addSpecialTokens: false }), imEnd];
      });
      const A = Math.max(...answers.map((r) => r.length));
      const N = answers.reduce((n, r) => n + r.length, 0);
      const grad = new Float32Array(o.batch * A);
      answers.forEach((r, b) => {
        grad.fill(-1 / N, b * A, b * A + r.length);
      });
      zeroFlatGrads(be, t);
      const taped = responseLogprobsTaped(t.model, prompts.map(idsOf), answers);
      const gradT = be.tensor(grad, [grad.length]);
      backwardToWeights(t.model, taped.tape, gradT, t.weightGrads);
      disposeTape(t.model, taped.tape);
      const lr = phase === 'tutor' ? chatLr(o, step) : o.sloppyLr;
      be.dispose(flatOptimizerStep(be, t, { lr, beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0.01, maxGradNorm: 1 }));
      const lp = await be.read(taped.logprobs);
      be.dispose(taped.logprobs, taped.entropy, gradT);
      // mean −log p over the answer tokens: Σ lp·grad with grad = −1/N on them
      let loss = 0;
      for (let i = 0; i < lp.length; i++) loss += lp[i] * grad[i];
      losses.push(loss);
      o.onStep?.({ phase, step: step + 1, steps: total, loss, lr });
    }
    const values = await fullWeightValues(t);
    const folder = new MemoryFolder('chat-arithmetic');
    await writeSynthetic({ ...spec(o.seed, dims, tokenizerJson), dtype: 'BF16', values: valuesByKey(t.model.arch, values) }, memorySink(folder));
    return { folder, losses, evaluation: await evaluateChatModel(be, folder, o.evalPrompts) };
  } finally {
    disposeFullTrainable(t);
  }
}

/** Greedy held-out accuracy of a chat model folder on the chat arithmetic task (its first `count` held-out prompts). */
export async function evaluateChatModel(be: Backend, folder: MemoryFolder, count: number): Promise<HfEvalResult> {
  const info = await openHfFolder(folder);
  const tok = new HfTokenizer(info.tokenizerJson, info.tokenizerConfig, info.generation);
  const model = await HfModel.load(be, folder, info, 'f32');
  try {
    const prompts = chatArithmeticEvalPrompts(count).map((text) => ({ text, ids: tok.encodeChat(text) }));
    return await greedyEvaluation(
      model,
      null,
      { prompts, decode: (ids) => tok.decode(ids, { skipSpecialTokens: true }), score: chatArithmeticScore },
      {
        maxNewTokens: 6,
        eosIds: tok.eosIds,
        padId: tok.padId ?? 0,
        batch: 50,
      },
    );
  } finally {
    model.dispose();
  }
}
