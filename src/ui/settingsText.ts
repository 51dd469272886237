// The settings' words in the visitor's language: knob labels and help, section names, allowed
// ranges, and the problems the validator and the link parser report (settings:problems.<kind>,
// from each problem's structure). English reads exactly as the problem's own `message`; Chinese
// names a setting by its label and its key, so it can be matched to verl / OpenRLHF configs.
import { t } from '../i18n/index.ts';
import { currentLocale } from '../i18n/index.ts';
import { type Group, isConfigKey, KNOB_HELP_VALUES, type NumRule, type PpoConfig, type ProblemDetail, shown, shownKey } from '../rl/config.ts';
import type { LinkDetail, LinkProblem } from '../store/urlConfig.ts';

export function knobLabel(key: keyof PpoConfig): string {
  return t(`settings:knobs.${key}.label`);
}

/** A knob's one-line help; Chinese marks identifiers with <code> (render it with <Trans>). */
export function knobHelpKey(key: keyof PpoConfig): string {
  return `knobs.${key}.help`;
}

export function groupLabel(group: Group): string {
  return t(`settings:groups.${group}`);
}

export { KNOB_HELP_VALUES };

/** "an integer from 1 to 6", "a number from 0 (exclusive) to 1, or empty to disable". */
export function rangeText(r: NumRule): string {
  const lo = r.minOpen ? t('settings:range.exclusive', { bound: r.min }) : String(r.min);
  const hi = r.maxOpen ? t('settings:range.exclusive', { bound: r.max }) : String(r.max);
  const kind = `${r.integer ? 'integer' : 'number'}${r.nullable ? 'OrEmpty' : ''}`;
  return t(`settings:range.${kind}`, { lo, hi });
}

/**
 * How a problem names a setting. English: the key (links, notices) or, in the panel, its label as
 * the panel shows it; Chinese: both, "注意力头数（nHead）".
 */
export function settingName(key: string, labelled: boolean): string {
  if (!isConfigKey(key)) return shownKey(key);
  if (currentLocale() !== 'en') return `${knobLabel(key)}（${key}）`;
  return labelled ? knobLabel(key) : key;
}

/** A validator or link problem in the visitor's language; `labelled`: settings named as the panel labels them. */
export function problemText(p: LinkProblem, labelled = false): string {
  const name = (key: string) => settingName(key, labelled);
  const d = p.detail as ProblemDetail | LinkDetail;
  const field = name(p.field);
  const value = shown(p.value);
  switch (d.kind) {
    case 'unknownSetting':
      return t('settings:problems.unknownSetting', { field: shownKey(p.field) });
    case 'number':
      return t('settings:problems.number', { field, value, why: t(`settings:problems.why.${d.why}`), range: rangeText(d.rule) });
    case 'choice':
      return t('settings:problems.choice', { field, value, choices: d.choices.map((x) => (d.quoted ? JSON.stringify(x) : String(x))).join(', ') });
    case 'notText':
      return t('settings:problems.notText', { field, maxBytes: d.maxBytes });
    case 'tooManyBytes':
      return t('settings:problems.tooManyBytes', { field, bytes: d.bytes, maxBytes: d.maxBytes });
    case 'noRewardModel':
      return t('settings:problems.noRewardModel', {
        field,
        value,
        task: d.task,
        others: d.allowed.map((s) => JSON.stringify(s)).join(', '),
        tasks: d.withModel.join(', '),
      });
    case 'headsDivide':
      return t('settings:problems.headsDivide', { field, value: String(p.value), width: name('dModel'), dModel: d.dModel });
    case 'miniBatches':
      return t('settings:problems.miniBatches', { field, value: String(p.value), batch: d.batch, prompts: name('promptsPerBatch'), samples: name('samplesPerPrompt') });
    case 'groupSamples':
      return t('settings:problems.groupSamples', { field, value: String(p.value), estimator: d.estimator });
    case 'groupGamma':
      return t('settings:problems.groupGamma', { field, value: String(p.value), estimator: d.estimator });
    case 'dynamicSamples':
      return t('settings:problems.dynamicSamples', { field, value: String(p.value) });
    case 'overlong':
      return t('settings:problems.overlong', {
        field,
        value: String(p.value),
        lengthField: name('maxResponseLength'),
        length: d.maxResponseLength,
        top: d.maxResponseLength - 1,
      });
    case 'adaptiveKl':
      return t('settings:problems.adaptiveKl', { field, value });
    case 'rolloutCorrection':
      return t(`settings:problems.rolloutCorrection.${d.reason}`, { field, value, cap: name('tisCap'), capValue: d.cap, icepop: name('icepopLower') });
    case 'present':
      return t('settings:problems.present', { param: p.field, value });
    case 'lang':
      return t('settings:problems.lang', { param: p.field, value, choices: d.choices.join(', ') });
    case 'budget':
      return t('settings:problems.budget', { param: p.field, value, max: d.max });
    case 'hideUnknown':
      return t('settings:problems.hideUnknown', { param: p.field, value });
    case 'notInUrl':
      return t('settings:problems.notInUrl', { field });
    case 'runPath':
      return t('settings:problems.runPath', { param: p.field, value, max: d.max });
    case 'embed':
      return t('settings:problems.embed', { param: p.field, value, choices: d.choices, example: 'chart:reward_mean' });
  }
}

/** Problems as one "Not applied: …; ….", the panel's wording. */
export function notAppliedText(problems: readonly LinkProblem[], labelled: boolean): string {
  return t('settings:panel.notApplied', { why: problems.map((p) => problemText(p, labelled).replace(/\.$/, '')).join('; ') });
}
