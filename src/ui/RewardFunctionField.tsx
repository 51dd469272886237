// The reward function you write: a code box under Settings, used when Reward source = function.
// The page never runs it: the trainer worker compiles it in a WebAssembly sandbox and calls it once
// on a sample when it arrives, and the answer (a score, or the named problem with its sample) shows
// here; so does a sample it refused during training, which paused the run. A function that came in
// a link is shown read-only until the visitor answers "Run this reward function?".
import { useEffect, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { formatNumber } from '../i18n/index.ts';
import { checkText, type ConfigProblem, TEXT_RULES } from '../rl/config.ts';
import { sourceBytes } from '../rl/rewardFunction/problem.ts';
import type { RewardFunctionProblem } from '../rl/rewardFunction/problem.ts';
import { useApp } from '../store/appStore.ts';
import { KnobHelp } from './KnobHelp.tsx';
import { knobLabel, notAppliedText } from './settingsText.ts';

const MAX_BYTES = TEXT_RULES.rewardFunction!.maxBytes;

function SampleOf({ problem }: { problem: RewardFunctionProblem }) {
  const { t } = useTranslation('settings');
  if (!problem.sample) return null;
  return (
    <dl className="reward-sample">
      <dt>{t('reward.samplePrompt')}</dt>
      <dd>
        <code>{JSON.stringify(problem.sample.prompt)}</code>
      </dd>
      <dt>{t('reward.sampleResponse')}</dt>
      <dd>
        <code>{JSON.stringify(problem.sample.response)}</code>
      </dd>
    </dl>
  );
}

function LinkReview({ source }: { source: string }) {
  const accept = useApp((s) => s.acceptRewardFunction);
  const decline = useApp((s) => s.setPendingRewardFunction);
  const { t } = useTranslation('settings');
  const [problems, setProblems] = useState<readonly ConfigProblem[] | null>(null);
  return (
    <fieldset className="reward-review" aria-labelledby="reward-review-q" data-testid="reward-function-review">
      <p id="reward-review-q">
        <strong>{t('reward.reviewQuestion')}</strong> {t('reward.reviewBody')}
      </p>
      <textarea className="reward-code" readOnly value={source} rows={Math.min(12, source.split('\n').length + 1)} aria-label={t('reward.reviewAria')} spellCheck={false} />
      <div className="toolbar">
        <button
          type="button"
          className="btn primary small"
          onClick={() => {
            const p = accept();
            setProblems(p.length > 0 ? p : null);
          }}
        >
          {t('reward.accept')}
        </button>
        <button type="button" className="btn small" onClick={() => decline(null)}>
          {t('reward.keepMine')}
        </button>
      </div>
      {problems ? (
        <span className="field-error" role="alert">
          {notAppliedText(problems, false)}
        </span>
      ) : null}
    </fieldset>
  );
}

export function RewardFunctionField() {
  const value = useApp((s) => s.config.rewardFunction);
  const rewardSource = useApp((s) => s.config.rewardSource);
  const pending = useApp((s) => s.pendingRewardFunction);
  const check = useApp((s) => s.rewardCheck);
  const failure = useApp((s) => s.rewardFailure);
  const setField = useApp((s) => s.setField);
  const { t } = useTranslation('settings');
  const [draft, setDraft] = useState<string | null>(null);
  // Its own size check names the field by its label, the validator's problems by its key.
  const [error, setError] = useState<{ problems: readonly ConfigProblem[]; labelled: boolean } | null>(null);
  const id = useId();
  // biome-ignore lint/correctness/useExhaustiveDependencies: `value` is the trigger: a function set elsewhere (preset, link, reset) replaces the draft
  useEffect(() => {
    setDraft(null);
    setError(null);
  }, [value]);
  if (rewardSource !== 'function' && pending === null) return null;

  const text = draft ?? value;
  const onChange = (next: string) => {
    setDraft(next);
    const own = checkText('rewardFunction', next, { maxBytes: MAX_BYTES });
    if (own) {
      setError({ problems: [own], labelled: true });
      return;
    }
    const problems = setField('rewardFunction', next);
    setError(problems.length > 0 ? { problems, labelled: false } : null);
  };
  const errorText = error === null ? null : notAppliedText(error.problems, error.labelled);
  const checked = check?.source === value ? check : null;
  const refused = failure?.source === value ? failure : null;
  return (
    <div className={`field field-code${error || checked?.problem || refused ? ' invalid' : ''}`} data-testid="reward-function">
      <label htmlFor={id}>{knobLabel('rewardFunction')}</label>
      <span className="muted small reward-size" data-testid="reward-function-size">
        {t('reward.bytes', { bytes: formatNumber(sourceBytes(text), { useGrouping: false }), max: formatNumber(MAX_BYTES, { useGrouping: false }) })}
      </span>
      {pending !== null ? <LinkReview source={pending} /> : null}
      <textarea
        id={id}
        name="rewardFunction"
        className="reward-code"
        value={text}
        rows={Math.min(14, Math.max(4, text.split('\n').length + 1))}
        spellCheck={false}
        autoComplete="off"
        autoCapitalize="off"
        aria-invalid={error || checked?.problem || refused ? true : undefined}
        aria-describedby={`${id}-help`}
        onChange={(e) => onChange(e.target.value)}
        onBlur={() => {
          if (!error) setDraft(null);
        }}
      />
      <span className="field-help reward-help" id={`${id}-help`} role="note">
        <KnobHelp knob="rewardFunction" /> {t('reward.helpMore')}
      </span>
      {errorText ? (
        <span className="field-error" role="alert">
          {errorText}
        </span>
      ) : null}
      {refused ? (
        <div className="field-error" role="alert" data-testid="reward-function-failure">
          {t('reward.refused', { iter: refused.iter, message: refused.message })}
          <SampleOf problem={refused} />
        </div>
      ) : checked?.problem ? (
        <div className="field-error" role="alert" data-testid="reward-function-problem">
          {t('reward.checkedRefused', { message: checked.problem.message })}
          <SampleOf problem={checked.problem} />
        </div>
      ) : checked ? (
        <span className="muted small reward-ok" role="status" data-testid="reward-function-ok">
          {t('reward.checkedOk', { score: checked.score })}
        </span>
      ) : null}
    </div>
  );
}
