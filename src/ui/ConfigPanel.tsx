// Every PpoConfig knob, grouped, each with a <label>, a one-line explanation on hover/focus and
// its allowed range. Input is validated as typed: an invalid value shows why inline and never
// reaches the store, so nothing running is disturbed.
import { useEffect, useId, useState } from 'react';
import { CHOICE_RULES, describeRange, NUMERIC_RULES, checkNumber, type PpoConfig } from '../rl/config.ts';
import { useApp } from '../store/appStore.ts';
import { FIELDS, GROUPS, type FieldMeta } from './configFields.ts';
import { fieldProblemText, withLabels } from './fieldProblems.ts';
import { RewardFunctionField } from './RewardFunctionField.tsx';

function formatNumber(v: number | null): string {
  return v === null ? '' : String(v);
}

function Help({ id, text, range }: { id: string; text: string; range?: string }) {
  return (
    <span className="field-help" id={id} role="note">
      {text}
      {range ? <span className="field-range"> Allowed: {range}.</span> : null}
    </span>
  );
}

function NumberField({ meta }: { meta: FieldMeta }) {
  const value = useApp((s) => s.config[meta.key]) as number | null;
  const setField = useApp((s) => s.setField);
  const rule = NUMERIC_RULES[meta.key]!;
  const [draft, setDraft] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const id = useId();
  // A config change from elsewhere (preset, URL, reset) replaces whatever was being typed.
  // biome-ignore lint/correctness/useExhaustiveDependencies: `value` is the trigger, not an input: a new config value resets the draft and its error
  useEffect(() => {
    setDraft(null);
    setError(null);
  }, [value]);

  const onChange = (text: string) => {
    setDraft(text);
    const trimmed = text.trim();
    const parsed = trimmed === '' && rule.nullable ? null : trimmed === '' ? NaN : Number(trimmed);
    const own = checkNumber(meta.label, parsed, rule);
    if (own) {
      setError(`Not applied: ${meta.label} must be ${describeRange(rule)}.`);
      return;
    }
    const problems = setField(meta.key, parsed as PpoConfig[typeof meta.key]);
    setError(problems.length > 0 ? fieldProblemText(meta.key, meta.label, problems, useApp.getState().config) : null);
  };

  return (
    <div className={`field${error ? ' invalid' : ''}`}>
      <label htmlFor={id}>{meta.label}</label>
      <input
        id={id}
        name={meta.key}
        type="text"
        inputMode="decimal"
        autoComplete="off"
        spellCheck={false}
        value={draft ?? formatNumber(value)}
        aria-invalid={error ? true : undefined}
        aria-describedby={`${id}-help${error ? ` ${id}-err` : ''}`}
        placeholder={rule.nullable ? 'off' : undefined}
        onChange={(e) => onChange(e.target.value)}
        onBlur={() => {
          // Leaving a field with an invalid draft shows the value that is really in force.
          if (!error) setDraft(null);
        }}
      />
      <Help id={`${id}-help`} text={meta.help} range={describeRange(rule)} />
      {error ? (
        <span className="field-error" id={`${id}-err`} role="alert">
          {error}
        </span>
      ) : null}
    </div>
  );
}

function ChoiceField({ meta }: { meta: FieldMeta }) {
  const value = useApp((s) => s.config[meta.key]);
  const setField = useApp((s) => s.setField);
  const choices = CHOICE_RULES[meta.key]!;
  const [error, setError] = useState<string | null>(null);
  const id = useId();
  // biome-ignore lint/correctness/useExhaustiveDependencies: `value` is the trigger, not an input: a new config value clears the stale error
  useEffect(() => setError(null), [value]);
  const apply = (v: unknown) => {
    const problems = setField(meta.key, v as PpoConfig[typeof meta.key]);
    setError(problems.length > 0 ? `Not applied: ${problems.map((p) => withLabels(p.message).replace(/\.$/, '')).join('; ')}.` : null);
  };
  const isBool = choices.length === 2 && choices.every((c) => typeof c === 'boolean');
  return (
    <div className={`field${isBool ? ' field-bool' : ''}${error ? ' invalid' : ''}`}>
      {isBool ? (
        <>
          <input id={id} name={meta.key} type="checkbox" checked={value === true} aria-describedby={`${id}-help`} onChange={(e) => apply(e.target.checked)} />
          <label htmlFor={id}>{meta.label}</label>
        </>
      ) : (
        <>
          <label htmlFor={id}>{meta.label}</label>
          <select id={id} name={meta.key} value={String(value)} aria-describedby={`${id}-help`} onChange={(e) => apply(choices.find((c) => String(c) === e.target.value))}>
            {choices.map((c) => (
              <option key={String(c)} value={String(c)}>
                {String(c)}
              </option>
            ))}
          </select>
        </>
      )}
      <Help id={`${id}-help`} text={meta.help} range={isBool ? undefined : `one of ${choices.map(String).join(', ')}`} />
      {error ? (
        <span className="field-error" role="alert">
          {error}
        </span>
      ) : null}
    </div>
  );
}

export function ConfigPanel() {
  const hidden = useApp((s) => s.hidden);
  const activeRun = useApp((s) => s.activeRunId);
  // Explanations and ranges open on hover/focus; touch screens and classrooms may want them all.
  const [showHelp, setShowHelp] = useState(false);
  return (
    <section className={`config-panel card${showHelp ? ' show-help' : ''}`} aria-labelledby="config-title">
      <div className="card-head">
        <h2 id="config-title">Settings</h2>
        <label className="muted small show-help-toggle">
          <input type="checkbox" checked={showHelp} onChange={(e) => setShowHelp(e.target.checked)} /> Show all explanations
        </label>
      </div>
      {activeRun ? <p className="muted small config-note">Changes apply from the next run (Reset).</p> : null}
      {GROUPS.map((group) => {
        const fields = FIELDS.filter((f) => f.group === group && !hidden.has(f.key));
        if (fields.length === 0) return null;
        return (
          <details key={group} className="config-group" open>
            <summary>{group}</summary>
            <div className="fields">
              {fields.map((f) =>
                NUMERIC_RULES[f.key] ? <NumberField key={f.key} meta={f} /> : CHOICE_RULES[f.key] ? <ChoiceField key={f.key} meta={f} /> : <RewardFunctionField key={f.key} />,
              )}
            </div>
          </details>
        );
      })}
    </section>
  );
}
