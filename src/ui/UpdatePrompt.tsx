// "A new version is ready — Reload": shown when the service worker holds a newer build. The page
// reloads only when Reload is pressed (src/store/appUpdate.ts).
import { useApp } from '../store/appStore.ts';
import { UPDATE_READY, updateAdvice, useAppUpdate } from '../store/appUpdate.ts';

export function UpdatePrompt() {
  const reload = useAppUpdate((s) => s.reload);
  const dismissed = useAppUpdate((s) => s.dismissed);
  const training = useApp((s) => s.runState === 'running');
  if (!reload || dismissed) return null;
  return (
    <div className="notice info" role="status" data-testid="update-prompt">
      <span>
        {UPDATE_READY} {updateAdvice(training)}
      </span>{' '}
      <button type="button" onClick={() => void reload()}>
        Reload
      </button>{' '}
      <button type="button" onClick={() => useAppUpdate.getState().dismiss()}>
        Later
      </button>
    </div>
  );
}
