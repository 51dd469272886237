// A knob's one-line help in the visitor's language (settings:knobs.<key>.help), as the settings
// panel and the reward function's box show it.
import { Trans, useTranslation } from 'react-i18next';
import type { PpoConfig } from '../rl/config.ts';
import { KNOB_HELP_VALUES, knobHelpKey } from './settingsText.ts';

/** A knob's help line: Chinese marks identifiers (choice values, formulas) with <code>; plain text ("A < 0") stays plain. */
export function KnobHelp({ knob }: { knob: keyof PpoConfig }) {
  const { t } = useTranslation('settings');
  const text = t(knobHelpKey(knob), KNOB_HELP_VALUES);
  if (!text.includes('<code>')) return text;
  return <Trans i18nKey={knobHelpKey(knob)} ns="settings" values={KNOB_HELP_VALUES} components={{ code: <code /> }} />;
}
