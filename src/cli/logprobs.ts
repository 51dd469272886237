// npm run logprobs -- --model DIR --prompt TEXT --response TEXT [--chat] [--backend webgpu|cpu] [--weights f16|f32]
// Prints one JSON object {"prompt_ids", "response_ids", "logprobs", "precision"}: the prompt's ids
// (one user turn through the chat template, generation prompt added, with --chat), the response's
// ids tokenized on its own as RL frameworks do (no special tokens added), and log p(response token |
// everything before it) from the model on the ops. Bad input: one line naming it, exit status 2.
import { parseArgs } from 'node:util';
import { responseLogprobs } from '../model/hf/scoring.ts';
import { runCli } from '../node/runCli.ts';
import { InputRefusal, knownText, MODEL_OPTIONS, MODEL_USAGE, openModel, promptIds, refusingBadInput } from './hfModelArgs.ts';

const USAGE = `usage: npm run logprobs -- ${MODEL_USAGE.replace('[--chat]', '--response TEXT [--chat]')}`;

async function main(): Promise<number> {
  const parse = () => parseArgs({ options: { ...MODEL_OPTIONS, response: { type: 'string' } } });
  let values: ReturnType<typeof parse>['values'];
  try {
    ({ values } = parse());
  } catch (e) {
    console.error(`npm run logprobs: ${(e as Error).message}\n${USAGE}`);
    return 2;
  }
  if (values.model === undefined || values.prompt === undefined || values.response === undefined) {
    console.error(USAGE);
    return 2;
  }
  return refusingBadInput('logprobs', async () => {
    let prompt: number[] = [];
    let response: number[] = [];
    // The ids decide the run's length, so the memory plan is made after tokenizing and before the upload.
    const { model, precision } = await openModel(values, (tokenizer, info) => {
      prompt = promptIds(tokenizer, values.prompt!, values.chat!);
      knownText(tokenizer, values.response!, '--response');
      response = tokenizer.encode(values.response!, { addSpecialTokens: false });
      if (prompt.length === 0) throw new InputRefusal('--prompt: the prompt tokenizes to no token; the first response token is scored from the prompt');
      if (response.length === 0) throw new InputRefusal('--response: the response tokenizes to no token');
      if (prompt.length + response.length > info.arch.maxPositions) {
        throw new InputRefusal(`--prompt and --response: ${prompt.length + response.length} tokens exceed the model's max_position_embeddings ${info.arch.maxPositions}`);
      }
      return { batch: 1, promptTokens: prompt.length, responseTokens: response.length };
    });
    const { logprobs } = await responseLogprobs(model, [prompt], [response]);
    console.log(JSON.stringify({ prompt_ids: prompt, response_ids: response, logprobs: logprobs[0], precision }));
    return 0;
  });
}

runCli(main);
