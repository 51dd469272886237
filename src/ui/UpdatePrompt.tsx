// "A new version is ready — Reload": shown when the service worker holds a newer build. The page
// reloads only when Reload is pressed (src/store/appUpdate.ts).
import { useTranslation } from 'react-i18next';
import { useApp } from '../store/appStore.ts';
import { updateAdvice, updateReady, useAppUpdate } from '../store/appUpdate.ts';
import { sentences } from '../store/notices.ts';

export function UpdatePrompt() {
  const { t } = useTranslation('notices');
  const reload = useAppUpdate((s) => s.reload);
  const dismissed = useAppUpdate((s) => s.dismissed);
  const training = useApp((s) => s.runState === 'running');
  if (!reload || dismissed) return null;
  return (
    <div className="notice info" role="status" data-testid="update-prompt">
      <span>{sentences([updateReady(), updateAdvice(training)])}</span>{' '}
      <button type="button" onClick={() => void reload()}>
        {t('update.reload')}
      </button>{' '}
      <button type="button" onClick={() => useAppUpdate.getState().dismiss()}>
        {t('update.later')}
      </button>
    </div>
  );
}
