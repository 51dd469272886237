// The charts' EMA smoothing, one setting for every chart on the page (the playground's and the
// own-model panel's): a slider from 0 (raw) to 0.99.
import { useTranslation } from 'react-i18next';
import { useApp } from '../../store/appStore.ts';

export function SmoothingSlider() {
  const { t } = useTranslation('charts');
  const smoothing = useApp((s) => s.smoothing);
  const setSmoothing = useApp((s) => s.setSmoothing);
  return (
    <label>
      {t('panel.smoothing')}
      <input type="range" min={0} max={0.99} step={0.01} value={smoothing} onChange={(e) => setSmoothing(Number(e.target.value))} aria-label={t('panel.smoothing')} />
      <span className="small" style={{ width: '3ch' }}>
        {smoothing.toFixed(2)}
      </span>
    </label>
  );
}
