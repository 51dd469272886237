// "Run both" on your own model: the two presets (GRPO, then PPO with a critic) trained one after
// the other from the same frozen base, each a fresh adapter, at the panel's iterations and seed,
// their curves drawn together (the first arm's kept beside the second's).
import { useTranslation } from 'react-i18next';
import { HF_PRESETS } from '../../rl/hf/hfPresets.ts';
import { hfTrainProblems } from '../../rl/hf/hfTrainSettings.ts';
import { useHfTrain } from '../../store/hfTrain.ts';

const flows = () => import('../../store/hfFlows.ts').then((m) => m.hfFlows());

/** `model`: what the arms' settings are checked against (a preset asks for a chat template). */
export function HfRunBoth({ model }: { model: { maxPositions: number; hasChatTemplate: boolean } }) {
  const { t } = useTranslation('notices');
  const settings = useHfTrain((s) => s.settings);
  const running = useHfTrain((s) => s.running);
  const runBoth = useHfTrain((s) => s.runBoth);
  const arms = HF_PRESETS.map((p) => ({ ...p.settings, iterations: settings.iterations, seed: settings.seed }));
  const names = HF_PRESETS.map((p) => t(`hf.train.preset.${p.id}.name`));
  // The first problem of either arm on this model, in the panel's words (the button waits for none).
  const problems = arms.flatMap((a) => hfTrainProblems(a, model));
  const problem = problems[0];
  // An iteration count out of range (or a cleared field) is not a count to name on the button.
  const countShown = !problems.some((p) => p.field === 'iterations');
  return (
    <p className="small hf-run-both">
      <button
        type="button"
        className="btn small"
        disabled={problem !== undefined || running || runBoth !== null}
        onClick={() => void flows().then((f) => f.trainBoth(arms))}
        data-testid="hf-train-run-both"
      >
        {countShown ? t('hf.train.runBoth', { count: settings.iterations }) : t('hf.train.runBothUncounted')}
      </button>{' '}
      {runBoth ? (
        <span role="status" data-testid="hf-train-run-both-status">
          {t('hf.train.runBothArm', { arm: runBoth.arm + 1, arms: runBoth.arms, name: names[runBoth.arm] ?? '' })}
        </span>
      ) : problem ? (
        <span className="muted" data-testid="hf-train-run-both-problem">
          {t('hf.train.runBothRefused', { problem: t(`hf.train.rule.${problem.rule}`, { field: t(`hf.train.${problem.field}`), ...problem.params }) })}
        </span>
      ) : (
        <span className="muted">{t('hf.train.runBothAbout', { first: names[0], second: names[1] })}</span>
      )}
    </p>
  );
}
