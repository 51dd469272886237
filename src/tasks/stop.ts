// Length control: prompt "n=5:" asks for exactly 5 characters and then EOS. Teaches the policy
// when to stop, the behaviour the action mask and score placement conventions are about.
//
// Rule reward: without EOS, −1 (a response that never stops is the worst outcome). With EOS,
// 1 − |len − n| / n clipped below at −1, where len counts every response character (the policy
// is not penalised separately for writing digits instead of 'a'/'b'; only length matters).
//
// The SFT model is made in two phases (sftRecipe): a tutor whose every example has the asked length
// (the model learns to count: 100% greedy exact-length rate), then a sloppy corpus that misses the
// length half of the time. The model keeps its count but spreads its stop over n ± 3, so sampled at
// temperature 1 it hits n only about half of the time: PPO's job is to make it stop where it knows.
import { Rng } from '../util/rng.ts';
import { mean, rate } from './metrics.ts';
import type { Task, TaskSample } from './task.ts';

export const MIN_TARGET = 1;
export const MAX_TARGET = 12;
export const MAX_RESPONSE = 16;
/** Probability that an SFT example has the wrong length; its offset is uniform over ±1..±3 (lengths kept in 1..MAX_RESPONSE). */
export const SFT_LENGTH_NOISE_RATE = 0.5;
export const SFT_MAX_LENGTH_OFFSET = 3;
const FILL = 'ab';
const EVAL_SEED = 0x5709;

export function parseStopPrompt(prompt: string): number {
  const m = /^n=(\d+):$/.exec(prompt);
  if (!m) throw new Error(`not a stop prompt: ${JSON.stringify(prompt)}`);
  return Number(m[1]);
}

export function stopPrompt(target: number): string {
  return `n=${target}:`;
}

function randomFill(rng: Rng, length: number): string {
  let s = '';
  for (let i = 0; i < length; i++) s += FILL[rng.int(0, FILL.length)];
  return s;
}

/** An SFT example of exactly the asked length. */
function exactExample(rng: Rng): { prompt: string; response: string } {
  const target = rng.int(MIN_TARGET, MAX_TARGET + 1);
  return { prompt: stopPrompt(target), response: randomFill(rng, target) };
}

function isExact(s: TaskSample): boolean {
  return s.endedWithEos && s.response.length === parseStopPrompt(s.prompt);
}

export const stopTask: Task = {
  name: 'stop',
  title: 'Stop at length n',
  description:
    `Write exactly n characters (n = ${MIN_TARGET}–${MAX_TARGET}) and then EOS. Reward 1 − |length − n|/n (at least −1), ` +
    `and −1 if no EOS. The SFT model learned exact lengths from a tutor, then a corpus that misses the length by up to ±${SFT_MAX_LENGTH_OFFSET} half the time.`,
  alphabet: 'n=:0123456789ab',
  maxPromptChars: 5, // "n=12:"
  maxResponseChars: MAX_RESPONSE,
  sftRecipe: [
    { label: 'tutor: every length exact', steps: 600, lr: 3e-3, batchSize: 32, example: (rng) => exactExample(rng) },
    { label: `sloppy: lengths off by up to ±${SFT_MAX_LENGTH_OFFSET} ${SFT_LENGTH_NOISE_RATE * 100}% of the time`, steps: 300, lr: 1e-3, batchSize: 32 },
  ],
  sftExample(rng) {
    const target = rng.int(MIN_TARGET, MAX_TARGET + 1);
    let length = target;
    if (rng.next() < SFT_LENGTH_NOISE_RATE) {
      const offsets: number[] = [];
      for (let k = -SFT_MAX_LENGTH_OFFSET; k <= SFT_MAX_LENGTH_OFFSET; k++) {
        if (k !== 0 && target + k >= 1 && target + k <= MAX_RESPONSE) offsets.push(k);
      }
      length = target + offsets[rng.int(0, offsets.length)];
    }
    return { prompt: stopPrompt(target), response: randomFill(rng, length) };
  },
  trainPrompt(rng) {
    return stopPrompt(rng.int(MIN_TARGET, MAX_TARGET + 1));
  },
  evalPrompts(count) {
    // Only 12 prompts exist, so evaluation cannot be disjoint from training: it covers every
    // target equally often instead (each block of 12 is one shuffled pass over 1..12).
    const rng = new Rng(EVAL_SEED);
    const out: string[] = [];
    while (out.length < count) {
      const block = Array.from({ length: MAX_TARGET - MIN_TARGET + 1 }, (_, i) => stopPrompt(MIN_TARGET + i));
      out.push(...rng.shuffle(block));
    }
    return out.slice(0, count);
  },
  ruleScore(s) {
    if (!s.endedWithEos) return -1;
    const target = parseStopPrompt(s.prompt);
    return Math.max(-1, 1 - Math.abs(s.response.length - target) / target);
  },
  evaluate(samples) {
    return {
      exact_length_rate: rate(samples, isExact),
      eos_rate: rate(samples, (s) => s.endedWithEos),
      mean_abs_length_error: mean(samples.map((s) => Math.abs(s.response.length - parseStopPrompt(s.prompt)))),
    };
  },
};
