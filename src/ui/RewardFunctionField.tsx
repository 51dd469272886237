// The reward function you write: a code box under Settings, used when Reward source = function.
// The page never runs it: the trainer worker compiles it in a WebAssembly sandbox and calls it once
// on a sample when it arrives, and the answer (a score, or the named problem with its sample) shows
// here; so does a sample it refused during training, which paused the run. A function that came in
// a link is shown read-only until the visitor answers "Run this reward function?".
import { useEffect, useId, useState } from 'react';
import { checkText, KNOBS, TEXT_RULES } from '../rl/config.ts';
import { sourceBytes } from '../rl/rewardFunction/problem.ts';
import type { RewardFunctionProblem } from '../rl/rewardFunction/problem.ts';
import { useApp } from '../store/appStore.ts';

const META = KNOBS.rewardFunction;
const MAX_BYTES = TEXT_RULES.rewardFunction!.maxBytes;

function SampleOf({ problem }: { problem: RewardFunctionProblem }) {
  if (!problem.sample) return null;
  return (
    <dl className="reward-sample">
      <dt>prompt</dt>
      <dd>
        <code>{JSON.stringify(problem.sample.prompt)}</code>
      </dd>
      <dt>response</dt>
      <dd>
        <code>{JSON.stringify(problem.sample.response)}</code>
      </dd>
    </dl>
  );
}

function LinkReview({ source }: { source: string }) {
  const accept = useApp((s) => s.acceptRewardFunction);
  const decline = useApp((s) => s.setPendingRewardFunction);
  const [problem, setProblem] = useState<string | null>(null);
  return (
    <fieldset className="reward-review" aria-labelledby="reward-review-q" data-testid="reward-function-review">
      <p id="reward-review-q">
        <strong>Run this reward function?</strong> It came with the link you opened. It would run sandboxed in the trainer (no page, storage or network), but it decides what the
        model is rewarded for: read it first. Until you answer, a run cannot start with it.
      </p>
      <textarea className="reward-code" readOnly value={source} rows={Math.min(12, source.split('\n').length + 1)} aria-label="Reward function from the link" spellCheck={false} />
      <div className="toolbar">
        <button
          type="button"
          className="btn primary small"
          onClick={() => {
            const p = accept();
            setProblem(p.length > 0 ? `Not applied: ${p.map((x) => x.message).join('; ')}.` : null);
          }}
        >
          Run this reward function
        </button>
        <button type="button" className="btn small" onClick={() => decline(null)}>
          Keep mine
        </button>
      </div>
      {problem ? (
        <span className="field-error" role="alert">
          {problem}
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
  const [draft, setDraft] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
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
    const own = checkText(META.label, next, { maxBytes: MAX_BYTES });
    if (own) {
      setError(`Not applied: ${own.message}.`);
      return;
    }
    const problems = setField('rewardFunction', next);
    setError(problems.length > 0 ? `Not applied: ${problems.map((p) => p.message).join('; ')}.` : null);
  };
  const checked = check?.source === value ? check : null;
  const refused = failure?.source === value ? failure : null;
  return (
    <div className={`field field-code${error || checked?.problem || refused ? ' invalid' : ''}`} data-testid="reward-function">
      <label htmlFor={id}>{META.label}</label>
      <span className="muted small reward-size" data-testid="reward-function-size">
        {sourceBytes(text)} / {MAX_BYTES} bytes
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
        {META.help} It gets the prompt and the response as strings and must return a finite number; the score clip and the no-EOS penalty apply after it.
      </span>
      {error ? (
        <span className="field-error" role="alert">
          {error}
        </span>
      ) : null}
      {refused ? (
        <div className="field-error" role="alert" data-testid="reward-function-failure">
          Refused in iteration {refused.iter}: {refused.message}. The run is paused and that iteration was not applied; edit the function and press Start.
          <SampleOf problem={refused} />
        </div>
      ) : checked?.problem ? (
        <div className="field-error" role="alert" data-testid="reward-function-problem">
          Checked on a sample and refused: {checked.problem.message}.
          <SampleOf problem={checked.problem} />
        </div>
      ) : checked ? (
        <span className="muted small reward-ok" role="status" data-testid="reward-function-ok">
          Checked on a sample: score {checked.score}.
        </span>
      ) : null}
    </div>
  );
}
