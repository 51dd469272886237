// README.md of an exported job: what it is, how to run it, what to expect.
import { rewardExport, UNTRANSLATED_WHY } from './rewardFunctionPy.ts';
import type { PpoConfig } from '../rl/config.ts';
import { getTask } from '../tasks/index.ts';
import { ENGINE_TITLES, OPENRLHF_TARGET, OPENRLHF_VERSION, VERL_TARGET, VERL_VERSION } from './engines.ts';
import { isAllLinear, jobModelPath, OPENRLHF_LORA_FLAGS, VERL_LORA_KEYS, VERL_LORA_LOAD_FORMAT } from './model.ts';
import { playgroundModelText, type JobPlan } from './plan.ts';

const EXPECT: Record<string, string> = {
  arithmetic:
    'A 0.5B instruct model already adds two-digit numbers well, so expect the held-out accuracy (the mean score on test.parquet) to start high and rise towards 1 as the model learns to stop right after the digits.',
  stop: 'Expect the score to rise as the model learns to count characters and stop; exact lengths are hard for a tokenizer-based model, so a mean around 0.5–0.8 is a good result.',
  sentiment:
    'Expect the lexicon score to climb quickly to the clip (3) while the wording collapses to repeated positive words — the same reward hacking the playground shows, at scale. Watch a KL term hold it back.',
};

export function jobReadme(plan: JobPlan, trainCount: number, testCount: number): string {
  const c = plan.config;
  const engine = plan.options.engine;
  const script = engine === 'verl' ? 'run_verl.sh' : 'run_openrlhf.sh';
  const install =
    engine === 'verl' ? `pip install "verl[vllm]==${VERL_VERSION}"   # or follow verl's install guide for your CUDA version` : `pip install "openrlhf[vllm]==${OPENRLHF_VERSION}"`;
  const task = getTask(c.task);
  return `# PPO Playground job: ${task.title} on ${ENGINE_TITLES[engine]}

This folder is the experiment you ran in the PPO Playground, ready for a real model on a GPU machine:
the same prompts and held-out split, the same reward rule, and the same hyperparameters mapped to
${ENGINE_TITLES[engine]}'s own settings. Targets ${engine === 'verl' ? VERL_TARGET : OPENRLHF_TARGET}.

| File | What it is |
| --- | --- |
| \`train.parquet\` | ${trainCount} training prompts drawn by the task's own generator (seed ${c.seed}), as chat messages |
| \`test.parquet\` | ${testCount} held-out prompts, the playground's evaluation set |
| \`reward.py\` | ${rewardExport(c).kind === 'function' ? "the run's reward function as its Python twin" : "the task's reward rule"} (standard-library Python): \`compute_score\` for verl, \`reward_func\` for OpenRLHF |
| \`${script}\` | the launch command; a \`#\` line for every knob that has no exact counterpart |

Columns: \`data_source\`, \`prompt\` (system instruction + the playground prompt as the user message),
\`ability\`, \`reward_model\` (\`{style: "rule", ground_truth}\`), \`extra_info\` (\`split\`, \`index\`,
\`playground_prompt\`) and \`label\` (the ground truth again, for OpenRLHF's \`--data.label_key\`).

## Run it

\`\`\`bash
${install}
bash ${script}                       # uses ${jobModelPath(plan.options.model)}
MODEL=/path/to/your/model bash ${script}   # any Hugging Face chat model
\`\`\`
${modelSection(plan)}
The script was checked for ${plan.options.gpus} GPU(s) on one node; extra arguments are passed on to
${ENGINE_TITLES[engine]} (${engine === 'verl' ? 'e.g. `trainer.logger=\'["console","wandb"]\'`' : 'e.g. `--logger.wandb.key True`'}).
Check the reward by hand: \`python3 reward.py "RESPONSE" "GROUND_TRUTH"\`.

## Task

${task.description}

The task: ${c.task}. One pass over train.parquet is ${plan.iterationsPerEpoch} iterations of
${c.promptsPerBatch} prompts × ${c.samplesPerPrompt} responses, ${c.ppoEpochs} PPO epoch(s) of ${c.miniBatches} minibatch(es) each
(${plan.optimizerSteps} optimiser steps). ${c.evalEvery > 0 ? `The held-out set is scored every ${c.evalEvery} iterations.` : 'Held-out evaluation is off, as in the run.'}

## What to expect

${EXPECT[c.task]}

## What differs from the playground

- The model: the playground run trained ${playgroundModelText(plan.options.actor, plan.config)}; here a
  pretrained chat model starts far ahead and reads tokens, not characters. Lengths (the response
  budget of ${c.maxResponseLength}) are tokens here.
- KL: the KL target is per token in the playground and in both engines (the mean over responses
  of each response's token-mean KL), so it is passed through unchanged. With the KL only in the
  loss, the playground's adaptive controller adapts the KL-loss coefficient, as OpenRLHF does;
  verl adapts only the in-reward coefficient (the script says so where it matters).
- KL with a group estimator (GRPO, RLOO, REINFORCE++-baseline, Dr. GRPO): verl subtracts β·ΣKL
  from each score before the group statistics, OpenRLHF adds −β·KL per token after them; the
  playground does either (group KL order ${c.groupKlOrder} in this run), each engine only its own.
- End of sequence: ${engine === 'verl' ? "verl hands the reward function responses without special tokens, so a response cut at the length limit cannot be told from one that stopped; the no-EOS penalty and the stop task's −1 only apply where that is known." : 'OpenRLHF passes the decoded query with its end token, so reward.py sees whether a response stopped.'}
- Every other difference is a \`#\` line at the top of \`${script}\`.
${rewardReadmeLine(c)}`;
}

/** The README's paragraph on a model chosen at export (--model) and its LoRA settings; nothing without one. */
function modelSection(plan: JobPlan): string {
  const m = plan.options.model;
  if (!m) return '';
  const intro = `\nThe model, chosen at export: \`${m.modelPath}\` (the script's default MODEL; it is not checked here, so it must exist where the job runs).`;
  const l = m.lora;
  if (!l) return `${intro} Every weight is trained (no LoRA).\n`;
  const verl = plan.options.engine === 'verl';
  const keys = verl
    ? `\`actor_rollout_ref.model.${VERL_LORA_KEYS.rank}\`, \`${VERL_LORA_KEYS.alpha}\` and \`${VERL_LORA_KEYS.targets}\` (and the same under \`critic.model\` for GAE), with \`${VERL_LORA_LOAD_FORMAT.key}=${VERL_LORA_LOAD_FORMAT.value}\``
    : `\`${OPENRLHF_LORA_FLAGS.rank}\`, \`${OPENRLHF_LORA_FLAGS.alpha}\` and \`${OPENRLHF_LORA_FLAGS.targets}\`${isAllLinear(l.targets) ? ' (left at its default all-linear)' : ''}, shared by actor and critic`;
  return `${intro}
LoRA: rank ${l.r}, alpha ${l.alpha} (the update is scaled by alpha / rank = ${l.alpha / l.r}), target modules ${l.targets.map((t) => `\`${t}\``).join(', ')}.
Only the adapters train; the reference model is the base model without them. Set by ${keys}.
`;
}

/** The README's line on a reward the job does not carry as the run had it. */
function rewardReadmeLine(c: PpoConfig): string {
  const r = rewardExport(c);
  if (r.kind === 'model') return '- The reward: this run used a learned reward model in the tab; the job uses the lexicon rule (reward.py says so).\n';
  if (r.kind === 'function-untranslated') return `- The reward: ${UNTRANSLATED_WHY}.\n`;
  if (r.kind === 'function') return "- The reward: the run's reward function, written in JavaScript in the tab, is in reward.py as its hand-written Python twin.\n";
  return '';
}
