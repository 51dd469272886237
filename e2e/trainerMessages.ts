// Synthetic trainer messages for driving the page in tests before the real trainer exists. They
// go through the same handler as worker messages (window.ppoPlayground.receive).
import type { Page } from '@playwright/test';
import type { WorkerToPage } from '../src/worker/protocol.ts';

export function metricMessages(n: number, offset = 0, seed = 1): WorkerToPage[] {
  let s = seed;
  const rnd = () => {
    s = (s * 16807) % 2147483647;
    return s / 2147483647;
  };
  return Array.from({ length: n }, (_, i) => ({
    type: 'metrics' as const,
    iter: i,
    values: {
      reward_mean: Math.tanh(i / 150) + offset + 0.1 * rnd(),
      policy_loss: -0.05 + 0.02 * rnd(),
      value_loss: Math.exp(-i / 100) + 0.05 * rnd(),
      clipfrac: 0.1 + 0.05 * rnd(),
      kl: i / 300 + 0.1 * rnd(),
      kl_token_mean: i / 2400 + 0.01 * rnd() + offset / 50,
      rollout_old_kl: 1e-3 * rnd() + offset / 1000,
      beta: 0.05 + offset / 100,
      approx_kl: 0.01 * rnd(),
      // Every series carries the run's offset: two runs drawn exactly on top of each other leave the
      // visible colour to drawing order, which made the screenshot baseline flaky.
      entropy: 2 - i / 400 + offset,
      explained_variance: 1 - Math.exp(-i / 80) - offset / 4,
      response_length_mean: 8 - i / 150 - offset, // at most maxResponseLength (8), the axis top
    },
  }));
}

/** Held-out evaluations after 0, every, 2·every, … iterations: accuracy rising from `start`. */
export function evalMessages(iterations: number, every: number, start = 0.14): WorkerToPage[] {
  const out: WorkerToPage[] = [];
  for (let k = 0; k <= iterations; k += every) {
    const accuracy = start + 0.3 * (1 - Math.exp(-k / 120));
    out.push({ type: 'eval', iter: k, values: { accuracy, greedy_accuracy: Math.min(1, accuracy + 0.08), eos_rate: 1 }, prompts: 38, seconds: 1.5 });
  }
  return out;
}

export const SAMPLE_MESSAGE: WorkerToPage = {
  type: 'samples',
  iter: 42,
  rows: [
    {
      prompt: '12+7=',
      response: '19<eos>',
      reward: 1,
      endedWithEos: true,
      tokens: [
        { text: '1', advantage: 0.8, kl: 0.02, ratio: 1.05, value: 0.4 },
        { text: '9', advantage: 1.2, kl: 0.05, ratio: 1.3, value: 0.6 },
        { text: '<eos>', advantage: 0.3, kl: 0.01, ratio: 0.98, value: 0.9 },
      ],
    },
    {
      prompt: '3+5=',
      response: '9999',
      reward: -1,
      endedWithEos: false,
      tokens: [
        { text: '9', advantage: -0.9, kl: 0.3, ratio: 0.7, value: -0.2 },
        { text: '9', advantage: -1.1, kl: 0.4, ratio: 0.75, value: -0.4 },
        { text: '9', advantage: -0.6, kl: 0.2, ratio: 1.4, value: -0.5 },
        { text: '9', advantage: -0.2, kl: 0.1, ratio: 3.6, value: -0.8 },
      ],
    },
  ],
};

export function ratioMessage(n: number): WorkerToPage {
  const ratios: number[] = [];
  const advantages: number[] = [];
  for (let i = 0; i < n; i++) {
    ratios.push(Math.exp(0.25 * Math.sin(i * 12.9898) + 0.15 * Math.cos(i * 4.1414)));
    advantages.push(Math.sin(i * 78.233));
  }
  return { type: 'ratios', iter: 42, ratios, advantages };
}

/**
 * Feeds the messages once a Reset clicked before has been acknowledged by the real worker (until
 * then the page drops run messages as the old run's; the worker may be busy preparing a trainer).
 */
export async function send(page: Page, msgs: WorkerToPage[]): Promise<void> {
  await page.evaluate(async (m) => {
    await window.ppoPlayground!.settled();
    for (const x of m) window.ppoPlayground!.receive(x);
  }, msgs);
}
