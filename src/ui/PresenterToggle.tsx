// The header's presenter-mode switch: a button with the switch role, so Space and Enter toggle it
// (the page's Space shortcut leaves focused buttons alone) and screen readers announce on / off.
import { useTranslation } from 'react-i18next';
import { setPresenter, usePresenter } from './presenter.ts';

export function PresenterToggle() {
  const { t } = useTranslation('common');
  const on = usePresenter();
  return (
    <button
      type="button"
      role="switch"
      aria-checked={on}
      className={`btn small presenter-toggle${on ? ' on' : ''}`}
      title={t('presenter.toggleHint')}
      onClick={() => setPresenter(!on)}
      data-testid="presenter-toggle"
    >
      <span className="switch-track" aria-hidden="true">
        <span className="switch-thumb" />
      </span>
      {t('presenter.toggle')}
    </button>
  );
}
