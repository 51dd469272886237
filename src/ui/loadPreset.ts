// Loading a preset into the settings, as its card does: its whole recipe (every knob it does not
// name back at its default), and it becomes the chosen preset (whose budget Start then trains to);
// a notice when it cannot.
import { t } from '../i18n/index.ts';
import type { Preset } from '../rl/presets.ts';
import { useApp } from '../store/appStore.ts';
import { problemText } from './settingsText.ts';

export function loadPreset(p: Preset): boolean {
  const s = useApp.getState();
  const problems = s.choosePreset(p.name);
  if (problems.length > 0) {
    s.setNotice({ tone: 'error', text: t('presets:notApplied', { problems: problems.map((x) => problemText(x)).join('; ') }) });
    return false;
  }
  return true;
}
