// What the settings panel shows for each PpoConfig knob: its section, read off the one config
// table (KNOBS in src/rl/config.ts) as the validator's ranges and choices are, so the page and the
// validator never disagree. Label and help are settings:knobs.<key> in the visitor's language
// (settingsText.ts); `label` and `help` here are the English ones.
import { CONFIG_KEYS, GROUPS, KNOBS, type Group, type PpoConfig } from '../rl/config.ts';

export { GROUPS, type Group };

export interface FieldMeta {
  key: keyof PpoConfig;
  group: Group;
  label: string;
  help: string;
}

export const FIELDS: readonly FieldMeta[] = CONFIG_KEYS.map((key) => {
  const { group, label, help } = KNOBS[key];
  return { key, group, label, help };
});
