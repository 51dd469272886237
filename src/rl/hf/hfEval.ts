// Held-out accuracy of a Hugging Face model with its actor's adapters: greedy answers to fixed
// prompts, scored by the task's rule, as the character model's evaluation reports `greedy_accuracy`.
import { generate } from '../../model/hf/hfGenerate.ts';
import type { HfModel } from '../../model/hf/hfModel.ts';
import type { ModelAdapters } from '../../model/hf/lora.ts';

export interface HfEvalOptions {
  maxNewTokens: number;
  eosIds: readonly number[];
  padId: number;
  /** Prompts generated together (bounds the KV cache). */
  batch: number;
}

export interface HfEvalResult {
  accuracy: number; // share of prompts scored ≥ 0.5
  scoreMean: number;
  samples: { prompt: string; response: string; score: number }[];
}

/**
 * Greedy responses to `prompts` (their ids and texts) with `adapters` on (null: the base model),
 * decoded by `decode` and scored by `score(promptText, responseText)`; the model's adapters are
 * left as they were.
 */
export async function greedyEvaluation(
  model: HfModel,
  adapters: ModelAdapters | null,
  prompts: { ids: readonly number[]; text: string }[],
  decode: (ids: readonly number[]) => string,
  score: (prompt: string, response: string) => number,
  opts: HfEvalOptions,
): Promise<HfEvalResult> {
  const before = model.loraAdapters;
  model.setAdapters(adapters);
  const samples: HfEvalResult['samples'] = [];
  try {
    for (let at = 0; at < prompts.length; at += opts.batch) {
      const chunk = prompts.slice(at, at + opts.batch);
      const gen = await generate(
        model,
        chunk.map((p) => p.ids),
        { maxNewTokens: opts.maxNewTokens, greedy: true, temperature: 1, topP: 1, topK: 0, seed: 0, eosIds: opts.eosIds, padId: opts.padId },
      );
      chunk.forEach((p, i) => {
        const response = decode(gen.tokens[i]);
        samples.push({ prompt: p.text, response, score: score(p.text, response) });
      });
    }
  } finally {
    model.setAdapters(before);
  }
  const n = Math.max(samples.length, 1);
  return {
    accuracy: samples.filter((s) => s.score >= 0.5).length / n,
    scoreMean: samples.reduce((s, x) => s + x.score, 0) / n,
    samples,
  };
}
