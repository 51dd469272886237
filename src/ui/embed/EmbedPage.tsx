// `?embed=<view>`: one teaching view or one metric's chart alone, for an iframe in slides. A bar
// names the view and the run it shows (a recorded run from `?run=`, or the page's own runs, live
// with Start and Pause) and links to the full page; the view below scales down to fit the frame
// (never below MIN_ZOOM: below that it scrolls). Presenter styling applies, for the back row.
import { lazy, type ReactNode, Suspense, useEffect, useLayoutEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useApp } from '../../store/appStore.ts';
import { trainer } from '../../store/trainerClient.ts';
import { EMBED_PARAM, type EmbedView, type EmbedViewId } from '../../store/viewLink.ts';
import { setPresenter } from '../presenter.ts';
import { useUrlSync } from '../useUrlSync.ts';
import './embed.css';

const VIEWS: Record<EmbedViewId, ReturnType<typeof lazy>> = {
  clipping: lazy(() => import('../teach/ClippingView.tsx').then((m) => ({ default: m.ClippingView }))),
  kl: lazy(() => import('../teach/KlShapingView.tsx').then((m) => ({ default: m.KlShapingView }))),
  samples: lazy(() => import('../teach/SamplesView.tsx').then((m) => ({ default: m.SamplesView }))),
  policies: lazy(() => import('../teach/ThreePoliciesView.tsx').then((m) => ({ default: m.ThreePoliciesView }))),
  inspect: lazy(() => import('../inspect/Inspector.tsx').then((m) => ({ default: m.Inspector }))),
};
const EmbedChart = lazy(() => import('./EmbedChart.tsx'));

/** Text smaller than this share of presenter size is no longer readable on a slide: scroll instead. */
const MIN_ZOOM = 0.55;

/** The page's link without `?embed=`: the full page on the same runs and settings. */
function fullPageHref(): string {
  const q = new URLSearchParams(window.location.search);
  q.delete(EMBED_PARAM);
  return `${window.location.pathname}?${q.toString()}`;
}

export function EmbedPage({ view }: { view: EmbedView }) {
  const { t } = useTranslation('common');
  const problems = useUrlSync();
  useEffect(() => {
    setPresenter(true, false);
    document.documentElement.classList.add('embed');
  }, []);
  const notice = useApp((s) => s.notice);
  return (
    <div className="embed" data-testid="embed" data-embed={view.kind === 'view' ? view.view : `chart:${view.metric}`}>
      <div className="embed-bar">
        <Suspense fallback={<strong>{t('embed.loading')}</strong>}>
          <EmbedTitle view={view} />
        </Suspense>
        <RunLabel />
        <LiveControls />
        <a className="embed-full" href={fullPageHref()} target="_blank" rel="noopener" data-testid="embed-full-page">
          {t('embed.openFull')}
        </a>
      </div>
      {problems.length > 0 || notice?.tone === 'error' ? (
        <p className="notice warn embed-notice" role="alert" data-testid="embed-notice">
          {[...problems, ...(notice?.tone === 'error' ? [notice.text] : [])].join(' ')}
        </p>
      ) : null}
      <Suspense fallback={<p className="muted small">{t('embed.loading')}</p>}>
        {view.kind === 'chart' ? (
          <EmbedChart metric={view.metric} />
        ) : (
          <FitToFrame>
            <EmbeddedView id={view.view} />
          </FitToFrame>
        )}
      </Suspense>
    </div>
  );
}

function EmbeddedView({ id }: { id: EmbedViewId }) {
  const View = VIEWS[id];
  return <View />;
}

function EmbedTitle({ view }: { view: EmbedView }) {
  const { t } = useTranslation(['teach', 'charts']);
  return <strong className="embed-title">{view.kind === 'view' ? t(`teach:tabs.${view.view}`) : t(`charts:titles.${view.metric}`)}</strong>;
}

/** The run the view shows: its name, and "recorded" for a run read from a file. */
function RunLabel() {
  const { t } = useTranslation('common');
  const run = useApp((s) => s.runs.find((r) => r.id === s.batchRunId) ?? s.runs.find((r) => r.id === s.activeRunId) ?? null);
  if (!run) return null;
  return (
    <span className="embed-run" data-testid="embed-run">
      {run.name}
      {run.recorded ? (
        <span className="badge recorded-badge" title={t('embed.recordedFrom', { file: run.recorded.file })}>
          {t('embed.recorded')}
        </span>
      ) : null}
    </span>
  );
}

/** Start and Pause for a live view; none while the view shows a recorded run. */
function LiveControls() {
  const { t } = useTranslation('common');
  const recorded = useApp((s) => s.runs.find((r) => r.id === s.batchRunId)?.recorded !== undefined);
  const runState = useApp((s) => s.runState);
  const gpu = useApp((s) => s.gpu.kind);
  const backend = useApp((s) => s.backend);
  if (recorded) return null;
  if (backend === 'webgpu' && (gpu === 'unavailable' || gpu === 'error'))
    return (
      <span className="muted small" data-testid="embed-no-webgpu">
        {t('embed.noWebGpu')}
      </span>
    );
  return runState === 'running' ? (
    <button type="button" className="btn small" onClick={() => void trainer.pause({ captureInFlight: true })}>
      <span aria-hidden="true">❚❚ </span>
      {t('controls.pause')}
    </button>
  ) : (
    <button type="button" className="btn primary small" onClick={() => void trainer.start()}>
      <span aria-hidden="true">▶ </span>
      {t('controls.start')}
    </button>
  );
}

/**
 * Its child scaled down (never up) until it fits the space under the bar: laid out at the width it
 * will have once scaled, then scaled with a transform. The scale only shrinks while the frame keeps
 * its size (content that grows shrinks it further), so it settles; a resized frame starts over at 1.
 */
function FitToFrame({ children }: { children: ReactNode }) {
  const outer = useRef<HTMLDivElement>(null);
  const inner = useRef<HTMLDivElement>(null);
  const [zoom, setZoom] = useState(1);
  // The child's layout height (before the transform), which the scaled box takes times the zoom.
  const [natural, setNatural] = useState(0);
  const [frame, setFrame] = useState({ w: 0, h: 0 });
  useLayoutEffect(() => {
    const el = outer.current;
    if (!el) return;
    const measure = () => {
      const next = { w: el.clientWidth, h: el.clientHeight };
      setFrame((f) => (f.w === next.w && f.h === next.h ? f : next));
    };
    measure();
    const ro = new ResizeObserver(measure);
    ro.observe(el);
    return () => ro.disconnect();
  }, []);
  useLayoutEffect(() => {
    const el = inner.current;
    if (!el || frame.h === 0) return;
    // A new frame size: start over from full size.
    setZoom(1);
    const refit = () => {
      const h = el.offsetHeight;
      if (h === 0) return;
      setNatural(h);
      // Scaled by z the child is h·z tall (its height at the new width is close to h): z ≤ frame / h.
      setZoom((z) => Math.max(MIN_ZOOM, Math.min(z, frame.h / h)));
    };
    refit();
    const ro = new ResizeObserver(refit);
    ro.observe(el);
    return () => ro.disconnect();
  }, [frame]);
  return (
    <div className="embed-fit" ref={outer} data-testid="embed-body" data-zoom={zoom.toFixed(3)}>
      <div className="embed-fit-box" style={natural > 0 ? { height: Math.ceil(natural * zoom) } : undefined}>
        <div ref={inner} className="embed-fit-inner" style={zoom < 1 ? { width: `${100 / zoom}%`, transform: `scale(${zoom})` } : undefined}>
          {children}
        </div>
      </div>
    </div>
  );
}
