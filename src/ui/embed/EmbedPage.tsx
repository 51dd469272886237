// `?embed=<view>`: one teaching view or one metric's chart alone, for an iframe in slides. A bar
// names the view and the run it shows (a recorded run from `?run=`, or the page's own runs, live
// with Start and Pause) and links to the full page; the view below takes the frame's width, its
// plots growing with it, and what lies below the frame's height scrolls inside the frame (the
// view's main plot comes first). Presenter styling applies, for the back row. A linked run of a
// model of your own is not a playground run: the teaching views show the last iteration its file
// keeps (its trace), a chart the file's rows (the metrics they carry; another says so).
import { lazy, type ReactNode, Suspense, useEffect, useMemo } from 'react';
import { useTranslation } from 'react-i18next';
import { checkConfig } from '../../rl/config.ts';
import { shownOwnBatch, useApp } from '../../store/appStore.ts';
import { useHfTrain } from '../../store/hfTrain.ts';
import { RUN_COLORS } from '../../store/runs.ts';
import { OWN_MODEL_RECORDED_ID } from '../../store/inspection.ts';
import { trainer } from '../../store/trainerClient.ts';
import { EMBED_PARAM, type EmbedView, type EmbedViewId } from '../../store/viewLink.ts';
import { hfChartRun, hfRunsChart } from '../hf/hfChartRun.ts';
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

/** The page's link without `?embed=`: the full page on the same runs and settings. */
function fullPageHref(): string {
  const q = new URLSearchParams(window.location.search);
  q.delete(EMBED_PARAM);
  return `${window.location.pathname}?${q.toString()}`;
}

/**
 * `ownModelFile`: the link's `?run=` file held a run of a model of your own; the teaching views show
 * its last iteration, when the file keeps it, and a chart its rows, when they carry that metric.
 */
export function EmbedPage({ view, ownModelFile = null }: { view: EmbedView; ownModelFile?: string | null }) {
  const { t } = useTranslation(['common', 'inspect']);
  const ownRun = useHfTrain((s) => (ownModelFile !== null && view.kind === 'chart' ? (s.recorded?.run ?? null) : null));
  const ownChart = useMemo(() => {
    if (!ownRun || view.kind !== 'chart') return null;
    const runs = [
      hfChartRun({ id: 'own', name: t('inspect:picker.ownModelRun', { model: ownRun.model.label }), color: RUN_COLORS[0], rows: ownRun.rows, settings: ownRun.settings }),
    ];
    return hfRunsChart(view.metric, runs) ? runs : null;
  }, [ownRun, view, t]);
  const problems = useUrlSync();
  const ownTrace = useHfTrain((s) => (ownModelFile !== null && view.kind === 'view' ? (s.recorded?.run.lastTrace ?? null) : null));
  useEffect(() => {
    if (!ownTrace) return;
    void import('../../store/hfFlows.ts')
      .then((m) => m.hfFlows())
      .then((f) => {
        f.inspectRecorded(0);
        // The frame's view shows the file's iteration, whatever playground runs this browser keeps.
        useApp.getState().viewRun(OWN_MODEL_RECORDED_ID);
      });
  }, [ownTrace]);
  const ownNotShown = ownModelFile !== null && (view.kind === 'chart' ? ownChart === null : ownTrace === null);
  useEffect(() => {
    setPresenter(true, false);
    document.documentElement.classList.add('embed');
  }, []);
  const notice = useApp((s) => s.notice);
  useRecordedSettings();
  return (
    <div className="embed" data-testid="embed" data-embed={view.kind === 'view' ? view.view : `chart:${view.metric}`}>
      <div className="embed-bar">
        <Suspense fallback={<strong>{t('embed.loading')}</strong>}>
          <EmbedTitle view={view} />
        </Suspense>
        <RunLabel own={ownRun ? { model: ownRun.model.label, file: ownModelFile ?? '' } : null} />
        {ownModelFile === null ? <LiveControls /> : null}
        <a className="embed-full" href={fullPageHref()} target="_blank" rel="noopener" data-testid="embed-full-page">
          {t('embed.openFull')}
        </a>
      </div>
      {problems.length > 0 || notice?.tone === 'error' || ownNotShown ? (
        <p className="notice warn embed-notice" role="alert" data-testid="embed-notice">
          {[...problems, ...(notice?.tone === 'error' ? [notice.text] : []), ...(ownNotShown ? [t('embed.ownModelRun', { file: ownModelFile })] : [])].join(' ')}
        </p>
      ) : null}
      <Suspense fallback={<p className="muted small">{t('embed.loading')}</p>}>
        {view.kind === 'chart' ? (
          <EmbedChart metric={view.metric} runs={ownModelFile !== null ? (ownChart ?? []) : undefined} />
        ) : (
          <FrameBody label={t('embed.viewRegion')}>
            <EmbeddedView id={view.view} />
          </FrameBody>
        )}
      </Suspense>
    </div>
  );
}

/**
 * A frame showing a recorded run takes that run's settings, so its views count and draw with them
 * and no "what if" against settings nobody in the frame can see appears. The page's own reward
 * function stays: a file's code is never taken as the page's.
 */
function useRecordedSettings(): void {
  const recorded = useApp((s) => s.runs.find((r) => r.id === s.batchRunId && r.recorded !== undefined) ?? null);
  const id = recorded?.id;
  // biome-ignore lint/correctness/useExhaustiveDependencies: once per recorded run shown (its config does not change)
  useEffect(() => {
    if (!recorded) return;
    const s = useApp.getState();
    const ownCode = recorded.config.rewardSource === 'function' ? { rewardSource: s.config.rewardSource } : {};
    const { config } = checkConfig({ ...recorded.config, ...ownCode, rewardFunction: s.config.rewardFunction });
    if (config) s.takeCheckedConfig(config);
  }, [id]);
}

function EmbeddedView({ id }: { id: EmbedViewId }) {
  const View = VIEWS[id];
  return <View />;
}

function EmbedTitle({ view }: { view: EmbedView }) {
  const { t } = useTranslation(['teach', 'charts']);
  return <strong className="embed-title">{view.kind === 'view' ? t(`teach:tabs.${view.view}`) : t(`charts:titles.${view.metric}`)}</strong>;
}

/**
 * The run the view shows: its name, and "recorded" for a run read from a file (an own-model one
 * too: the batch a view shows, or `own`, the file a chart draws).
 */
function RunLabel({ own: ownFile }: { own: { model: string; file: string } | null }) {
  const { t } = useTranslation(['common', 'inspect']);
  const run = useApp((s) => s.runs.find((r) => r.id === s.batchRunId) ?? s.runs.find((r) => r.id === s.activeRunId) ?? null);
  const ownBatch = useApp(shownOwnBatch);
  const own = ownBatch ?? ownFile;
  if (own)
    return (
      <span className="embed-run" data-testid="embed-run">
        {t('inspect:picker.ownModelRun', { model: own.model })}
        {own.file !== undefined ? (
          <span className="badge recorded-badge" title={t('embed.recordedFrom', { file: own.file })}>
            {t('embed.recorded')}
          </span>
        ) : null}
      </span>
    );
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
  // A recorded run, or an own-model batch (the settings panel's Start trains neither).
  const recorded = useApp((s) => s.runs.find((r) => r.id === s.batchRunId)?.recorded !== undefined || shownOwnBatch(s) !== undefined);
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

/** The view under the bar: the frame's width, scrolling inside the frame below its height. */
function FrameBody({ children, label }: { children: ReactNode; label: string }) {
  return (
    // A region that scrolls is reached by keyboard too (tabIndex), and named for a screen reader.
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be focusable to scroll by keyboard
    <section className="embed-body" tabIndex={0} aria-label={label} data-testid="embed-body">
      {children}
    </section>
  );
}
