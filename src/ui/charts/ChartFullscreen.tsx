// Any chart card can fill the window, for a projector: a button in its head toggles it, Esc (or the
// button again) brings it back, and focus stays on the button both ways. The card is laid over the
// page (fixed, the whole viewport), so it works wherever the browser's own full-screen does not.
import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';

export interface ChartFullscreen {
  full: boolean;
  toggle(): void;
  /** The chart's drawing height while it fills the window (px). */
  height: number;
}

/** Room the card's head, note and padding take around the drawing when it fills the window (px). */
const CHROME = 170;

export function useChartFullscreen(): ChartFullscreen {
  const [full, setFull] = useState(false);
  const [height, setHeight] = useState(() => (typeof window === 'undefined' ? 400 : Math.max(200, window.innerHeight - CHROME)));
  useEffect(() => {
    if (!full) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== 'Escape') return;
      e.preventDefault();
      e.stopPropagation();
      setFull(false);
    };
    const onResize = () => setHeight(Math.max(200, window.innerHeight - CHROME));
    onResize();
    document.addEventListener('keydown', onKey, true);
    window.addEventListener('resize', onResize);
    return () => {
      document.removeEventListener('keydown', onKey, true);
      window.removeEventListener('resize', onResize);
    };
  }, [full]);
  return { full, toggle: () => setFull((f) => !f), height };
}

/** Four corners pointing out (fill the window) or in (come back), drawn at the button's text size. */
function CornersIcon({ inward }: { inward: boolean }) {
  const d = inward ? 'M6 1v5H1M10 1v5h5M6 15v-5H1M10 15v-5h5' : 'M1 6V1h5M15 6V1h-5M1 10v5h5M15 10v5h-5';
  return (
    <svg className="corners-icon" width="1em" height="1em" viewBox="0 0 16 16" aria-hidden="true">
      <path d={d} fill="none" stroke="currentColor" strokeWidth="2" />
    </svg>
  );
}

/** The head's full-screen switch: a toggle button, named with the chart's title; Esc is said while it is on. */
export function FullscreenButton({ fs, title }: { fs: ChartFullscreen; title: string }) {
  const { t } = useTranslation('charts');
  return (
    <button
      type="button"
      className="btn ghost small fullscreen-toggle"
      aria-pressed={fs.full}
      aria-label={t(fs.full ? 'panel.exitFullscreenLabel' : 'panel.fullscreenLabel', { title })}
      title={t(fs.full ? 'panel.exitFullscreenLabel' : 'panel.fullscreenLabel', { title })}
      onClick={fs.toggle}
      data-testid="chart-fullscreen"
    >
      <CornersIcon inward={fs.full} />
      {fs.full ? <span>{t('panel.exitFullscreen')}</span> : null}
    </button>
  );
}
