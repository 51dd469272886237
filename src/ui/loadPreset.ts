// Loading a preset into the settings, as its card does: its values on top of the current config,
// and it becomes the chosen preset (whose budget Start then trains to); a notice when it cannot.
import { t } from '../i18n/index.ts';
import type { Preset } from '../rl/presets.ts';
import { useApp } from '../store/appStore.ts';
import { problemText } from './settingsText.ts';

export function loadPreset(p: Preset): boolean {
  const s = useApp.getState();
  const problems = s.applyConfig({ ...s.config, ...p.values });
  if (problems.length > 0) {
    s.setNotice({ tone: 'error', text: t('presets:notApplied', { problems: problems.map((x) => problemText(x)).join('; ') }) });
    return false;
  }
  s.setPreset(p.name);
  return true;
}
