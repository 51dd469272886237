// A reward function written in the playground, in the exported job. Arbitrary JavaScript is not
// translated to Python (no translator would be trustworthy, and a wrong reward trains the wrong
// thing silently); the functions that ship with the page have hand-written Python twins, checked
// against the JavaScript by tests/cli/export_reward_function.test.ts. Anything else exports the
// task's rule, and the README, the launch script and reward.py say why.
import { DEFAULT_REWARD_FUNCTION, type PpoConfig } from '../rl/config.ts';

/** A Python `rule_score` with the same results as a shipped JavaScript reward function. */
interface PythonTwin {
  doc: string;
  body: string;
}

const TWINS: ReadonlyMap<string, PythonTwin> = new Map([
  [
    DEFAULT_REWARD_FUNCTION,
    {
      doc: 'The reward function of the run: how often the response says "good" (non-overlapping), at most 3.',
      body: `def rule_score(response, ended_with_eos, ground_truth):
    return float(min(3, response.count("good")))`,
    },
  ],
]);

export type RewardExport = { kind: 'rule' } | { kind: 'model' } | { kind: 'function'; twin: PythonTwin } | { kind: 'function-untranslated' };

/** What reward.py holds for this config. */
export function rewardExport(c: PpoConfig): RewardExport {
  if (c.rewardSource === 'rule') return { kind: 'rule' };
  if (c.rewardSource === 'model') return { kind: 'model' };
  const twin = TWINS.get(c.rewardFunction.trim());
  return twin ? { kind: 'function', twin } : { kind: 'function-untranslated' };
}

/** Why a written function is not in the job, in one sentence (README, script and reward.py). */
export const UNTRANSLATED_WHY =
  "this run was scored by a reward function written in the playground; JavaScript is not translated to Python (a wrong translation would train the wrong thing without a sign), so the job uses the task's rule: port your function into rule_score in reward.py";

/** The launch script's `# reward:` line, or null when reward.py is the task's rule as trained. */
export function rewardScriptNote(c: PpoConfig): string | null {
  const r = rewardExport(c);
  if (r.kind === 'model') return "# reward: the playground scores this run with a learned reward model; the job exports the task's lexicon rule instead (reward.py)";
  if (r.kind === 'function') return '# reward: the run’s reward function, as its hand-written Python twin (reward.py)';
  if (r.kind === 'function-untranslated') return `# reward: ${UNTRANSLATED_WHY}`;
  return null;
}
