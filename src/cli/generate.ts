// npm run generate -- --model DIR --prompt TEXT [--chat] [--max-new-tokens N] [--greedy] [--seed N]
//                     [--backend webgpu|cpu] [--weights f16|f32]
// Samples a response with the KV cache; sampling settings (do_sample, temperature, top_p, top_k,
// max_new_tokens) and the EOS ids come from generation_config.json as transformers' generate() reads
// them; --greedy decodes greedily whatever the file says. Prints one JSON object {"prompt_ids",
// "response_ids", "text", "stopped" ("eos" or "max_new_tokens"), "precision"}.
import { parseArgs } from 'node:util';
import { generate } from '../model/hf/hfGenerate.ts';
import { SAMPLE_VOCAB_MAX_EOS, SAMPLE_VOCAB_MAX_K } from '../ops/sampleVocab.ts';
import { runCli } from '../node/runCli.ts';
import { InputRefusal, MODEL_OPTIONS, MODEL_USAGE, openModel, promptIds, refusingBadInput } from './hfModelArgs.ts';

const USAGE = `usage: npm run generate -- ${MODEL_USAGE} [--max-new-tokens N] [--greedy] [--seed N]`;
/** max_new_tokens when neither the flag nor generation_config.json sets it. */
const DEFAULT_MAX_NEW = 32;

function nonNegativeInt(flag: string, text: string | undefined, fallback: number, min: number): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!/^\d+$/.test(text) || n < min) throw new InputRefusal(`--${flag} must be an integer ≥ ${min}, got ${JSON.stringify(text)}`);
  return n;
}

async function main(): Promise<number> {
  const parse = () =>
    parseArgs({
      options: { ...MODEL_OPTIONS, 'max-new-tokens': { type: 'string' }, greedy: { type: 'boolean', default: false }, seed: { type: 'string' } },
    });
  let values: ReturnType<typeof parse>['values'];
  try {
    ({ values } = parse());
  } catch (e) {
    console.error(`npm run generate: ${(e as Error).message}\n${USAGE}`);
    return 2;
  }
  if (values.model === undefined || values.prompt === undefined) {
    console.error(USAGE);
    return 2;
  }
  return refusingBadInput('generate', async () => {
    const seed = nonNegativeInt('seed', values.seed, 0, 0);
    let prompt: number[] = [];
    let maxNewTokens = 0;
    // The prompt's ids and max_new_tokens decide the run's length: the memory plan comes after them, before the upload.
    const { info, tokenizer, model, precision } = await openModel(values, (tokenizer, info) => {
      maxNewTokens = nonNegativeInt('max-new-tokens', values['max-new-tokens'], info.generation.maxNewTokens ?? DEFAULT_MAX_NEW, 1);
      prompt = promptIds(tokenizer, values.prompt!, values.chat!);
      if (prompt.length === 0) throw new InputRefusal('--prompt: the prompt tokenizes to no token');
      if (prompt.length + maxNewTokens > info.arch.maxPositions) {
        throw new InputRefusal(`--max-new-tokens: ${prompt.length} prompt tokens + ${maxNewTokens} new exceed the model's max_position_embeddings ${info.arch.maxPositions}`);
      }
      return { batch: 1, promptTokens: prompt.length, responseTokens: maxNewTokens };
    });
    const g = info.generation;
    const eosIds = tokenizer.eosIds;
    const greedy = values.greedy! || !g.doSample;
    if (!greedy && g.topK > SAMPLE_VOCAB_MAX_K && g.topK < model.vocab) {
      throw new InputRefusal(`${g.source}: top_k ${g.topK} exceeds the sampler's ${SAMPLE_VOCAB_MAX_K} (0 keeps every token); or pass --greedy`);
    }
    if (eosIds.length > SAMPLE_VOCAB_MAX_EOS) throw new InputRefusal(`${g.source}: ${eosIds.length} eos_token_id values exceed the sampler's ${SAMPLE_VOCAB_MAX_EOS}`);
    const padId = tokenizer.padId ?? g.padTokenId ?? eosIds[0] ?? 0;
    const out = await generate(model, [prompt], {
      maxNewTokens,
      greedy,
      temperature: g.temperature,
      topP: g.topP,
      topK: g.topK,
      seed,
      eosIds,
      padId,
    });
    const ids = out.tokens[0];
    console.log(
      JSON.stringify({
        prompt_ids: prompt,
        response_ids: ids,
        text: tokenizer.decode(ids, { skipSpecialTokens: true }),
        stopped: out.finished[0] ? 'eos' : 'max_new_tokens',
        precision,
      }),
    );
    return 0;
  });
}

runCli(main);
