// reward.py for the exported job: the task's rule reward in Python (standard library only), with
// the playground's score clip and no-EOS penalty, as verl's compute_score and OpenRLHF's
// reward_func. tests/cli/export_reward.test.ts runs it through python3 against the TypeScript rule.
import type { PpoConfig } from '../rl/config.ts';
import { LEXICON_CLIP, NEGATIVE_WORDS, POSITIVE_WORDS } from '../tasks/sentiment.ts';
import type { TaskName } from '../tasks/task.ts';
import { dataSource } from './dataset.ts';
import { rewardExport, UNTRANSLATED_WHY } from './rewardFunctionPy.ts';
import type { Engine } from './engines.ts';

/** End-of-sequence texts of common chat tokenizers (Qwen, Llama 3, Mistral/Llama 2, Gemma). */
export const EOS_MARKERS = ['<|im_end|>', '<|endoftext|>', '<|eot_id|>', '<|end_of_text|>', '</s>', '<eos>', '<end_of_turn>'];

const pyFloat = (x: number): string => (Number.isInteger(x) ? `${x}.0` : String(x));
const pyStrings = (xs: readonly string[]): string => `(${xs.map((x) => JSON.stringify(x)).join(', ')}${xs.length === 1 ? ',' : ''})`;

const RULES: Record<TaskName, { doc: string; body: string }> = {
  arithmetic: {
    doc: 'Reward 1 for the exact sum in digits followed by the end of the sequence, else 0.',
    body: `def rule_score(response, ended_with_eos, ground_truth):
    return 1.0 if ended_with_eos and response == ground_truth else 0.0`,
  },
  stop: {
    doc: 'Without an end of sequence: -1. With one: 1 - |len - n| / n, at least -1 (n = the asked length).',
    body: `def rule_score(response, ended_with_eos, ground_truth):
    if not ended_with_eos:
        return -1.0
    target = int(ground_truth)
    return max(-1.0, 1.0 - abs(len(response) - target) / target)`,
  },
  sentiment: {
    doc:
      '(#positive - #negative lexicon words) clipped to +-LEXICON_CLIP. Words are runs of letters or digits.\n' +
      'This is the lexicon rule: a playground run with a learned reward model is exported with this rule too.',
    body: `POSITIVE_WORDS = frozenset(${pyStrings(POSITIVE_WORDS)})
NEGATIVE_WORDS = frozenset(${pyStrings(NEGATIVE_WORDS)})
LEXICON_CLIP = ${pyFloat(LEXICON_CLIP)}
_WORD = re.compile(r"[a-z0-9]+")


def rule_score(response, ended_with_eos, ground_truth):
    score = 0
    for word in _WORD.findall(response.lower()):
        if word in POSITIVE_WORDS:
            score += 1
        elif word in NEGATIVE_WORDS:
            score -= 1
    return float(max(-LEXICON_CLIP, min(LEXICON_CLIP, score)))`,
  },
};

const UNMARKED_NOTE: Record<Engine, string> = {
  verl: "verl's reward managers decode responses with skip_special_tokens=True, so a finished response\n# carries no end marker: unmarked text counts as finished (a response cut at the length limit too).",
  openrlhf: "OpenRLHF's queries keep special tokens, so a finished response ends with the tokenizer's end\n# marker: unmarked text counts as cut off at the length limit.",
};

export function rewardPy(config: PpoConfig, engine: Engine): string {
  const task = config.task;
  const source = rewardExport(config);
  const rule = source.kind === 'function' ? source.twin : RULES[task];
  const learned =
    source.kind === 'model'
      ? "\nNOTE: this playground run was scored by a learned reward model; the job uses the task's lexicon\nrule instead (a reward model trained in the tab does not transfer to another model's tokens).\n"
      : source.kind === 'function-untranslated'
        ? `\nNOTE: ${UNTRANSLATED_WHY}.\n`
        : '';
  return `"""Reward for the PPO Playground task "${task}", exported with the run's settings.

${rule.doc}
Then, as in the playground: the score is clipped to +-SCORE_CLIP and NO_EOS_PENALTY is added to a
response that did not end with the end-of-sequence token. Surrounding whitespace of the response is
ignored (the playground's own alphabet for this task has none where it would matter).
${learned}
verl:     custom_reward_function.path=reward.py custom_reward_function.name=compute_score
OpenRLHF: --reward.remote_url reward.py (calls reward_func)
Standard library only; torch is used for OpenRLHF's return value when it is installed.
"""
import re

DATA_SOURCE = ${JSON.stringify(dataSource(task))}
SCORE_CLIP = ${pyFloat(config.scoreClip)}
NO_EOS_PENALTY = ${pyFloat(config.noEosPenalty)}
EOS_MARKERS = ${pyStrings(EOS_MARKERS)}
# ${UNMARKED_NOTE[engine]}
UNMARKED_ENDS_WITH_EOS = ${engine === 'verl' ? 'True' : 'False'}


${rule.body}


def split_response(text, ended_hint=None):
    """(response before the first end marker, whether it ended with end-of-sequence)."""
    cut = -1
    for marker in EOS_MARKERS:
        at = text.find(marker)
        if at >= 0 and (cut < 0 or at < cut):
            cut = at
    if cut >= 0:
        return text[:cut], True
    if ended_hint is not None:
        return text, bool(ended_hint)
    return text, UNMARKED_ENDS_WITH_EOS


def final_score(response, ended_with_eos, ground_truth):
    raw = rule_score(response.strip(), ended_with_eos, ground_truth)
    clipped = min(SCORE_CLIP, max(-SCORE_CLIP, raw)) if raw == raw else 0.0
    return clipped + (0.0 if ended_with_eos else NO_EOS_PENALTY)


def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    """verl: one response. extra_info may carry "ended_with_eos" when the caller knows it."""
    if data_source != DATA_SOURCE:
        raise ValueError("reward.py scores %s, got data_source %r" % (DATA_SOURCE, data_source))
    hint = extra_info.get("ended_with_eos") if isinstance(extra_info, dict) else None
    response, ended = split_response(solution_str or "", hint)
    return final_score(response, ended, "" if ground_truth is None else str(ground_truth))


def reward_func(queries, prompts, labels, **kwargs):
    """OpenRLHF: queries are prompt + response as decoded text, labels the ground truths."""
    scores = []
    for query, prompt, label in zip(queries, prompts, labels):
        at = query.rfind(prompt) if prompt else -1
        completion = query[at + len(prompt):] if at >= 0 else query
        response, ended = split_response(completion)
        scores.append(final_score(response, ended, "" if label is None else str(label)))
    try:
        import torch
    except ImportError:
        return {"rewards": scores, "scores": scores, "extra_logs": {}}
    rewards = torch.tensor(scores, dtype=torch.float32)
    return {"rewards": rewards, "scores": rewards.clone(), "extra_logs": {}}


if __name__ == "__main__":
    import sys

    if len(sys.argv) not in (2, 3):
        sys.exit("usage: python3 reward.py RESPONSE [GROUND_TRUTH]")
    print(compute_score(DATA_SOURCE, sys.argv[1], sys.argv[2] if len(sys.argv) == 3 else ""))
`;
}
