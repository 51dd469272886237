// Supervised fine-tuning: next-token cross-entropy on response tokens (EOS included, prompt masked),
// loss = −token-mean of logprobs at T = 1, so SFT runs through the same kernels as PPO:
// aggregate weights → logprobsBackward → model backward → one gradNorm + one AdamW per step.
import type { Tensor } from '../backend/tensor.ts';
import { aggregate } from '../ops/aggregate.ts';
import { logprobs, logprobsBackward } from '../ops/logprobs.ts';
import type { CharTokenizer } from './tokenizer.ts';
import { Rng } from '../util/rng.ts';
import type { OptimizerParams } from './gpt.ts';
import type { TrainableSequenceModel } from './sequenceModel.ts';
import { lrAt, type LrSchedule } from './schedule.ts';
import { scale } from '../ops/elementwise.ts';
import { sliceSeq, sliceSeqBackward } from '../ops/slice.ts';

/** Host arrays of one SFT minibatch: whole sequences [BOS, prompt, response, EOS], left-padded to S. */
export interface SftBatch {
  B: number;
  S: number;
  tokens: Int32Array; // (B, S)
  attnMask: Float32Array; // (B, S)
  positions: Int32Array; // (B, S)
  /** Token t+1 scored by the logits at t. */
  targets: Int32Array; // (B, S−1)
  /** 1 where targets[t] is a response token or the EOS. */
  lossMask: Float32Array; // (B, S−1)
}

export function buildSftBatch(tok: CharTokenizer, examples: { prompt: string; response: string }[], width?: number): SftBatch {
  const rows = examples.map((e) => ({ prompt: tok.encodePrompt(e.prompt), response: [...tok.encode(e.response), tok.eosId] }));
  const longest = rows.reduce((m, r) => Math.max(m, r.prompt.length + r.response.length), 0);
  const S = width ?? longest;
  if (S < longest) throw new Error(`SFT batch width ${S} is shorter than the longest example (${longest})`);
  const B = rows.length;
  const tokens = new Int32Array(B * S).fill(tok.padId);
  const attnMask = new Float32Array(B * S);
  const positions = new Int32Array(B * S);
  const targets = new Int32Array(B * (S - 1)).fill(tok.padId);
  const lossMask = new Float32Array(B * (S - 1));
  for (let b = 0; b < B; b++) {
    const seq = [...rows[b].prompt, ...rows[b].response];
    const start = S - seq.length;
    const firstResponse = start + rows[b].prompt.length;
    for (let j = 0; j < seq.length; j++) {
      const t = start + j;
      tokens[b * S + t] = seq[j];
      attnMask[b * S + t] = 1;
      positions[b * S + t] = j;
      if (t >= 1) {
        targets[b * (S - 1) + t - 1] = seq[j];
        if (t >= firstResponse) lossMask[b * (S - 1) + t - 1] = 1;
      }
    }
  }
  return { B, S, tokens, attnMask, positions, targets, lossMask };
}

/**
 * One SFT forward/backward on a batch: accumulates gradients into the model and returns the loss
 * tensor (1) on the device (the caller decides when to read it).
 */
export function sftLossAndBackward<Cache>(model: TrainableSequenceModel<Cache>, batch: SftBatch): Tensor {
  const { be } = model;
  const { B, S } = batch;
  // Everything made here but the loss is disposed when the scope returns.
  return be.scope(() => {
    const tokens = be.tensor(batch.tokens, [B, S], 'i32');
    const attnMask = be.tensor(batch.attnMask, [B, S]);
    const positions = be.tensor(batch.positions, [B, S], 'i32');
    const targets = be.tensor(batch.targets, [B, S - 1], 'i32');
    const lossMask = be.tensor(batch.lossMask, [B, S - 1]);

    const { out: logits, cache } = model.forward(tokens, attnMask, positions); // (B, S, V)
    const scored = sliceSeq(be, { x: logits, start: 0, len: S - 1 }); // (B, S−1, V)
    const { logprobs: logp } = logprobs(be, { logits: scored, tokens: targets, temperature: 1 });
    const { value, weights } = aggregate(be, { x: logp, actionMask: lossMask, agg: 'token-mean' });
    // loss = −Σ w·logp, so ∂loss/∂logp = −w.
    scale(be, { x: weights, alpha: -1 });
    scale(be, { x: value, alpha: -1 });
    const gScored = logprobsBackward(be, { logits: scored, tokens: targets, temperature: 1, gradLogprobs: weights }); // (B, S−1, V)
    const gLogits = sliceSeqBackward(be, { grad: gScored, seqLen: S, start: 0 }); // (B, S, V)
    model.backward(cache, gLogits);
    return value;
  });
}

export interface SftOptions {
  steps: number;
  batchSize: number;
  seed: number;
  schedule: Omit<LrSchedule, 'totalSteps'>;
  optimizer: Omit<OptimizerParams, 'lr'>;
  /** Read the loss back every `logEvery` steps (and at the last step). */
  logEvery: number;
  onLog?: (info: { step: number; loss: number; lr: number; gradNorm: number }) => void;
  /** Called before every step; it may throw to end the run there (a cancelled SFT in the page). */
  beforeStep?: () => void;
}

export const DEFAULT_SFT: Omit<SftOptions, 'steps' | 'seed'> = {
  batchSize: 32,
  schedule: { peak: 3e-3, warmupSteps: 20, minRatio: 0.1 },
  optimizer: { beta1: 0.9, beta2: 0.99, eps: 1e-8, weightDecay: 0.01, maxGradNorm: 1 },
  logEvery: 10,
};

/** Where SFT examples come from (a task; the model layer needs only this of it). */
export interface SftSource {
  sftExample(rng: Rng): { prompt: string; response: string };
}

/** One phase of an SFT recipe (the model layer's view of a task's SftPhase). */
export interface SftPhaseSpec {
  label: string;
  steps: number;
  lr: number;
  batchSize: number;
  /** The phase's corpus; the source's own `sftExample` when absent. */
  example?(rng: Rng): { prompt: string; response: string };
}

/**
 * Trains `model` through the phases of a recipe in order. Phase i draws its examples from seed
 * `seed + i`; the AdamW moments and step count carry over from one phase to the next, and each
 * phase has its own warm-up and cosine schedule. A one-phase recipe is exactly trainSft.
 */
export async function trainSftRecipe<Cache>(
  model: TrainableSequenceModel<Cache>,
  source: SftSource,
  phases: readonly SftPhaseSpec[],
  tok: CharTokenizer,
  opts: {
    seed: number;
    onLog?: (info: { phase: number; step: number; loss: number; lr: number; gradNorm: number }) => void;
    /** Awaited after each phase (e.g. to evaluate the model it left). */
    onPhaseEnd?: (phase: number) => Promise<void>;
    beforeStep?: () => void;
  },
): Promise<void> {
  for (const [i, phase] of phases.entries()) {
    const corpus: SftSource = phase.example ? { sftExample: phase.example } : source;
    await trainSft(model, corpus, tok, {
      ...DEFAULT_SFT,
      steps: phase.steps,
      seed: opts.seed + i,
      batchSize: phase.batchSize,
      schedule: { ...DEFAULT_SFT.schedule, peak: phase.lr },
      logEvery: Math.max(1, Math.round(phase.steps / 10)),
      onLog: opts.onLog && ((info) => opts.onLog!({ phase: i, ...info })),
      beforeStep: opts.beforeStep,
    });
    await opts.onPhaseEnd?.(i);
  }
}

/** Trains `model` (lm head) on the task's SFT corpus; returns the logged losses. */
export async function trainSft<Cache>(model: TrainableSequenceModel<Cache>, task: SftSource, tok: CharTokenizer, opts: SftOptions): Promise<{ step: number; loss: number }[]> {
  if (model.head !== 'lm') throw new Error('SFT needs an lm head');
  const rng = new Rng(opts.seed);
  const schedule: LrSchedule = { ...opts.schedule, totalSteps: opts.steps };
  const log: { step: number; loss: number }[] = [];
  for (let step = 0; step < opts.steps; step++) {
    opts.beforeStep?.();
    const examples = Array.from({ length: opts.batchSize }, () => task.sftExample(rng));
    const batch = buildSftBatch(tok, examples);
    model.zeroGrad();
    const loss = sftLossAndBackward(model, batch);
    const lr = lrAt(step, schedule);
    const norm = model.optimizerStep({ ...opts.optimizer, lr });
    if ((step + 1) % opts.logEvery === 0 || step === opts.steps - 1) {
      const [l, n] = await model.be.readMany([loss, norm]);
      log.push({ step: step + 1, loss: l[0] });
      opts.onLog?.({ step: step + 1, loss: l[0], lr, gradNorm: n[0] });
    } else {
      model.be.flush();
    }
    model.be.dispose(loss, norm);
  }
  return log;
}
