// Every PpoConfig knob, grouped, each with a <label>, a one-line explanation on hover/focus and
// its allowed range. Input is validated as typed: an invalid value shows why inline and never
// reaches the store, so nothing running is disturbed. The words are the visitor's language's
// (settings namespace); a problem is kept as found and worded at render, so a language switch
// rewords it too.
import { useEffect, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { CHOICE_RULES, NUMERIC_RULES, checkNumber, type ConfigProblem, type PpoConfig } from '../rl/config.ts';
import { useApp } from '../store/appStore.ts';
import { FIELDS, GROUPS, type FieldMeta } from './configFields.ts';
import { fieldProblemText } from './fieldProblems.ts';
import { RewardFunctionField } from './RewardFunctionField.tsx';
import { KnobHelp } from './KnobHelp.tsx';
import { groupLabel, knobLabel, notAppliedText, rangeText } from './settingsText.ts';

function formatNumber(v: number | null): string {
  return v === null ? '' : String(v);
}

function Help({ id, knob, range }: { id: string; knob: keyof PpoConfig; range?: string }) {
  const { t } = useTranslation('settings');
  return (
    <span className="field-help" id={id} role="note">
      <KnobHelp knob={knob} />
      {range ? <span className="field-range"> {t('panel.allowed', { range })}</span> : null}
    </span>
  );
}

/** Why a typed value was not applied: outside its own range, or refused with the other settings (and the config then). */
type FieldError = { own: true } | { own: false; problems: readonly ConfigProblem[]; config: PpoConfig };

function NumberField({ meta }: { meta: FieldMeta }) {
  const value = useApp((s) => s.config[meta.key]) as number | null;
  const setField = useApp((s) => s.setField);
  const rule = NUMERIC_RULES[meta.key]!;
  const { t } = useTranslation('settings');
  const label = knobLabel(meta.key);
  const [draft, setDraft] = useState<string | null>(null);
  const [error, setError] = useState<FieldError | null>(null);
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
    if (checkNumber(meta.key, parsed, rule)) {
      setError({ own: true });
      return;
    }
    const problems = setField(meta.key, parsed as PpoConfig[typeof meta.key]);
    setError(problems.length > 0 ? { own: false, problems, config: useApp.getState().config } : null);
  };
  const errorText = error === null ? null : error.own ? t('panel.mustBe', { label, range: rangeText(rule) }) : fieldProblemText(meta.key, label, error.problems, error.config);

  return (
    <div className={`field${error ? ' invalid' : ''}`}>
      <label htmlFor={id}>{label}</label>
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
        placeholder={rule.nullable ? t('panel.off') : undefined}
        onChange={(e) => onChange(e.target.value)}
        onBlur={() => {
          // Leaving a field with an invalid draft shows the value that is really in force.
          if (!error) setDraft(null);
        }}
      />
      <Help id={`${id}-help`} knob={meta.key} range={rangeText(rule)} />
      {errorText ? (
        <span className="field-error" id={`${id}-err`} role="alert">
          {errorText}
        </span>
      ) : null}
    </div>
  );
}

function ChoiceField({ meta }: { meta: FieldMeta }) {
  const value = useApp((s) => s.config[meta.key]);
  const setField = useApp((s) => s.setField);
  const choices = CHOICE_RULES[meta.key]!;
  const { t } = useTranslation('settings');
  const label = knobLabel(meta.key);
  const [error, setError] = useState<readonly ConfigProblem[] | null>(null);
  const id = useId();
  // biome-ignore lint/correctness/useExhaustiveDependencies: `value` is the trigger, not an input: a new config value clears the stale error
  useEffect(() => setError(null), [value]);
  const apply = (v: unknown) => {
    const problems = setField(meta.key, v as PpoConfig[typeof meta.key]);
    setError(problems.length > 0 ? problems : null);
  };
  const isBool = choices.length === 2 && choices.every((c) => typeof c === 'boolean');
  return (
    <div className={`field${isBool ? ' field-bool' : ''}${error ? ' invalid' : ''}`}>
      {isBool ? (
        <>
          <input id={id} name={meta.key} type="checkbox" checked={value === true} aria-describedby={`${id}-help`} onChange={(e) => apply(e.target.checked)} />
          <label htmlFor={id}>{label}</label>
        </>
      ) : (
        <>
          <label htmlFor={id}>{label}</label>
          <select id={id} name={meta.key} value={String(value)} aria-describedby={`${id}-help`} onChange={(e) => apply(choices.find((c) => String(c) === e.target.value))}>
            {choices.map((c) => (
              <option key={String(c)} value={String(c)}>
                {String(c)}
              </option>
            ))}
          </select>
        </>
      )}
      <Help id={`${id}-help`} knob={meta.key} range={isBool ? undefined : t('panel.oneOf', { choices: choices.map(String).join(', ') })} />
      {error ? (
        <span className="field-error" role="alert">
          {notAppliedText(error, true)}
        </span>
      ) : null}
    </div>
  );
}

export function ConfigPanel() {
  const hidden = useApp((s) => s.hidden);
  const activeRun = useApp((s) => s.activeRunId);
  const { t } = useTranslation('settings');
  // Explanations and ranges open on hover/focus; touch screens and classrooms may want them all.
  const [showHelp, setShowHelp] = useState(false);
  return (
    <section className={`config-panel card${showHelp ? ' show-help' : ''}`} aria-labelledby="config-title">
      <div className="card-head">
        <h2 id="config-title">{t('panel.title')}</h2>
        <label className="muted small show-help-toggle">
          <input type="checkbox" checked={showHelp} onChange={(e) => setShowHelp(e.target.checked)} /> {t('panel.showAll')}
        </label>
      </div>
      {activeRun ? <p className="muted small config-note">{t('panel.nextRun')}</p> : null}
      {GROUPS.map((group) => {
        const fields = FIELDS.filter((f) => f.group === group && !hidden.has(f.key));
        if (fields.length === 0) return null;
        return (
          <details key={group} className="config-group" open>
            <summary>{groupLabel(group)}</summary>
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
