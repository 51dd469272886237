// What the settings panel shows for each PpoConfig knob: group, label, one-line explanation, all
// read off the one config table (KNOBS in src/rl/config.ts), as the validator's ranges and choices
// are, so the page and the validator never disagree.
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
