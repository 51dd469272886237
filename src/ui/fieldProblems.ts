// The settings panel's message for a value that is in its own range but does not fit the other
// settings (validateConfig's cross-field checks, e.g. "nHead = 3: must divide dModel (64)"): the
// knobs are named by their labels as the panel shows them, and for an integer knob with a small
// range the values that would be accepted with the other settings are listed. Worded in the
// visitor's language (settingsText.ts); the English is the validator's message with labels.
import { t } from '../i18n/index.ts';
import { KNOBS, NUMERIC_RULES, validateConfig, type ConfigProblem, type PpoConfig } from '../rl/config.ts';
import { notAppliedText, rangeText } from './settingsText.ts';

const LABEL = new Map(Object.entries(KNOBS).map(([key, k]) => [key, k.label]));

/**
 * Config keys in an English validator message replaced by the panel's English labels ("nHead" →
 * "Attention heads"); what settingsText.problemText(p, true) says in English.
 * A key that is also an everyday word ("seed", "task") is replaced only where it is set ("seed =").
 */
export function withLabels(message: string): string {
  return message.replace(/\b[a-z][A-Za-z0-9]*\b/g, (w, at: number) => {
    const label = LABEL.get(w);
    if (!label) return w;
    return /[A-Z0-9]/.test(w) || /^\s*=/.test(message.slice(at + w.length)) ? label : w;
  });
}

/** Integer ranges up to this many values are searched for the accepted ones. */
const MAX_SEARCH = 512;

/** "1, 2, 4, 8" or "1–6, 8"; runs of consecutive integers collapse. */
function compact(values: readonly number[]): string {
  const parts: string[] = [];
  for (let i = 0; i < values.length; ) {
    let j = i;
    while (j + 1 < values.length && values[j + 1] === values[j] + 1) j++;
    parts.push(j - i >= 2 ? `${values[i]}–${values[j]}` : values.slice(i, j + 1).join(', '));
    i = j + 1;
  }
  return parts.join(', ');
}

/** The values of integer knob `key` that validate with the rest of `config` (null: not an integer knob, or too wide a range). */
export function acceptedValues(key: keyof PpoConfig, config: PpoConfig): number[] | null {
  const rule = NUMERIC_RULES[key];
  if (!rule?.integer || rule.max - rule.min + 1 > MAX_SEARCH) return null;
  const ok: number[] = [];
  for (let v = rule.min; v <= rule.max; v++) {
    if ((rule.minOpen && v === rule.min) || (rule.maxOpen && v === rule.max)) continue;
    if (validateConfig({ ...config, [key]: v } as PpoConfig & Record<string, unknown>).length === 0) ok.push(v);
  }
  return ok;
}

/** The panel's text for problems that setting `key` produced: labelled, with what would be accepted. */
export function fieldProblemText(key: keyof PpoConfig, label: string, problems: readonly ConfigProblem[], config: PpoConfig): string {
  const rule = NUMERIC_RULES[key];
  const accepted = acceptedValues(key, config);
  const allowed =
    accepted === null
      ? rule
        ? ` ${t('settings:panel.onItsOwn', { label, range: rangeText(rule) })}`
        : ''
      : accepted.length > 0
        ? ` ${t('settings:panel.canBe', { label, values: compact(accepted) })}`
        : ` ${t('settings:panel.noValue', { label })}`;
  return `${notAppliedText(problems, true)}${allowed}`;
}
