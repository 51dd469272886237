// After the reward-hacking preset's β = 0 run: its last iteration was captured, and one click
// opens the inspector on the response that scored best while drifting furthest from the reference.
import { useTranslation } from 'react-i18next';
import { useApp } from '../../store/appStore.ts';
import { useInspection } from '../../store/inspection.ts';
import './hackedOffer.css';

export function HackedSampleOffer({ onOpen }: { onOpen: () => void }) {
  const { t } = useTranslation('teach');
  const hacked = useInspection((s) => s.hacked);
  const focusOn = useInspection((s) => s.focusOn);
  const runName = useApp((s) => s.runs.find((r) => r.id === hacked?.runId)?.name);
  if (!hacked || runName === undefined) return null;
  return (
    <p className="hacked-offer small" role="status" data-testid="hacked-offer">
      <span>{t('hacked.text', { run: runName, iter: hacked.iter })}</span>
      <button
        type="button"
        className="btn small primary"
        onClick={() => {
          focusOn(hacked);
          onOpen();
        }}
      >
        {t('hacked.open')}
      </button>
    </p>
  );
}
