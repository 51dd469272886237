// The header's Tour button, and on a first visit a small invitation card that does not block
// anything: the tour itself (driver.js, loaded on demand) starts only when asked for.
// Its words are in the `tour` namespace, which is not part of the first paint: the button appears
// once that small file has arrived (a Suspense of its own, so the header never waits for it).
import { Suspense, useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useApp } from '../../store/appStore.ts';
import { startTour } from './startTour.ts';
import { TOUR_STEPS } from './steps.ts';
import { markTourSeen, shouldInvite, tourSeen } from './tourMemory.ts';
import './launcher.css';

/** The invitation waits until the page has settled, so it never lands on a half-drawn page. */
const INVITE_DELAY_MS = 1200;

function automated(): boolean {
  try {
    return typeof navigator !== 'undefined' && navigator.webdriver === true;
  } catch {
    return false;
  }
}

export function TourLauncher() {
  return (
    <Suspense fallback={null}>
      <Launcher />
    </Suspense>
  );
}

function Launcher() {
  const { t } = useTranslation('tour');
  const settled = useApp((s) => s.gpu.kind !== 'checking');
  const [invite, setInvite] = useState(false);
  useEffect(() => {
    if (!settled || !shouldInvite(tourSeen(), automated())) return;
    const timer = window.setTimeout(() => setInvite(true), INVITE_DELAY_MS);
    return () => window.clearTimeout(timer);
  }, [settled]);
  const open = () => {
    setInvite(false);
    void startTour();
  };
  const dismiss = () => {
    setInvite(false);
    markTourSeen();
  };
  return (
    <>
      <button type="button" className="btn tour-button" data-testid="tour-button" title={t('helpButtonLabel')} onClick={open}>
        <span className="tour-button-mark" aria-hidden="true">
          ?
        </span>
        {t('helpButton')}
      </button>
      {invite ? (
        <div
          className="tour-invite"
          role="dialog"
          aria-modal="false"
          aria-labelledby="tour-invite-title"
          aria-describedby="tour-invite-body"
          data-testid="tour-invite"
          onKeyDown={(e) => {
            if (e.key === 'Escape') dismiss();
          }}
        >
          <h2 id="tour-invite-title">{t('inviteTitle')}</h2>
          <p id="tour-invite-body">{t('inviteBody', { steps: TOUR_STEPS.length })}</p>
          <div className="tour-invite-actions">
            <button type="button" className="btn primary small" onClick={open}>
              {t('inviteStart')}
            </button>
            <button type="button" className="btn ghost small" onClick={dismiss}>
              {t('inviteDismiss')}
            </button>
          </div>
          <p className="muted small">{t('inviteLater')}</p>
        </div>
      ) : null}
    </>
  );
}
