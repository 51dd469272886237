// Page shell: header with the WebGPU status, then either the playground or the no-WebGPU guide.
import { lazy, Suspense, useEffect, useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useApp } from '../store/appStore.ts';
import { startPersistence } from '../store/persist.ts';
import { trainer } from '../store/trainerClient.ts';
import { EMBED_PARAM, embedsRecordedRun, embedViewOf, RUN_PARAM, runPathOf } from '../store/viewLink.ts';
import { Announcer } from './a11y/Announcer.tsx';
import { SkipLink } from './a11y/SkipLink.tsx';
import { GpuStatusBadge } from './GpuStatus.tsx';
import { LanguageSwitch } from './LanguageSwitch.tsx';
import { ModelBadge } from './ModelBadge.tsx';
import { Playground } from './Playground.tsx';
import { PresenterToggle } from './PresenterToggle.tsx';
import { TourLauncher } from './tour/TourLauncher.tsx';
import { StoragePersistence } from './TabOwner.tsx';
import { UpdatePrompt } from './UpdatePrompt.tsx';

// Only a browser without usable WebGPU sees the guide: it is not part of the first load.
const NoWebGpu = lazy(() => import('./NoWebGpu.tsx').then((m) => ({ default: m.NoWebGpu })));
// Only a link with ?embed= shows one view alone (viewLink.ts).
const EmbedPage = lazy(() => import('./embed/EmbedPage.tsx').then((m) => ({ default: m.EmbedPage })));

const linkParam = (name: string) => new URLSearchParams(window.location.search).get(name) ?? '';

/** Recorded runs among the saved ones get back what their kept files bring (inspected iterations, state). */
async function restoreRecorded(): Promise<void> {
  if (!useApp.getState().runs.some((r) => r.recorded)) return;
  const { restoreRecordedRuns } = await import('../store/runFiles.ts');
  await restoreRecordedRuns();
}

interface LinkedRun {
  /** A playground run was opened (charts and views show it). */
  run: boolean;
  /** The file's name when it held a run of a model of your own (the own-model panel shows it). */
  ownModelFile: string | null;
}

/** `?run=`: the run file served with the page that the link opens, once the saved runs are back. */
async function openLinkedRun(): Promise<LinkedRun> {
  const path = runPathOf(linkParam(RUN_PARAM));
  if (path === null) return { run: false, ownModelFile: null };
  const { openServedRunFile } = await import('../store/runFiles.ts');
  const opened = await openServedRunFile(path);
  return { run: opened.run !== null, ownModelFile: opened.ownModel ? path.slice(path.lastIndexOf('/') + 1) : null };
}

export function App() {
  const { t } = useTranslation();
  const gpu = useApp((s) => s.gpu);
  const backend = useApp((s) => s.backend);
  const embed = useMemo(() => embedViewOf(linkParam(EMBED_PARAM)), []);
  const [linked, setLinked] = useState<LinkedRun>({ run: false, ownModelFile: null });
  useEffect(() => {
    // The WebGPU self-test started before the first render (main.tsx).
    // Another tab taking the runs over stops training here (tabOwner.ts).
    void startPersistence({ pause: () => (useApp.getState().runState === 'running' ? void trainer.pause() : undefined) })
      .then(restoreRecorded)
      .then(openLinkedRun)
      // The same answer keeps the same object: a new one would re-render the whole page for nothing.
      .then((l) => setLinked((prev) => (prev.run === l.run && prev.ownModelFile === l.ownModelFile ? prev : l)));
  }, []);
  // The trainer worker starts as soon as WebGPU passed its self-test, so the kernels compile, the
  // SFT checkpoint arrives and the baseline is evaluated while the user reads the page rather
  // than after Start. Not sooner: started beside the self-test, its 45 pipelines queued ahead of
  // the self-test's one in the browser's GPU process and delayed "WebGPU ready" by seconds
  // (SwiftShader), for at most ~0.2 s of head start.
  const gpuReady = gpu.kind === 'ready';
  // An embedded recorded run (a slide) trains nothing unless asked: no warm-up behind it.
  const embedsRecorded = useMemo(() => embedsRecordedRun(window.location.search), []);
  useEffect(() => {
    if (gpuReady && backend === 'webgpu' && !embedsRecorded) trainer.warmUp();
  }, [gpuReady, backend, embedsRecorded]);
  // The SFT models kept from an earlier visit go to the worker before the first trainer is built.
  useEffect(() => {
    void import('../store/sftFlows.ts').then((f) => f.restoreSftModels());
  }, []);
  const blocked = backend === 'webgpu' && (gpu.kind === 'unavailable' || gpu.kind === 'error');
  // A recorded run from the link needs no GPU: without WebGPU the page shows it on the CPU backend
  // (which trains nothing until asked), as the guide's "Open a recorded run…" does.
  const setBackend = useApp((s) => s.setBackend);
  useEffect(() => {
    if (blocked && linked.run) setBackend('cpu');
  }, [blocked, linked.run, setBackend]);
  if (embed)
    return (
      <Suspense fallback={null}>
        <Announcer />
        <EmbedPage view={embed} ownModelFile={linked.ownModelFile} />
      </Suspense>
    );
  return (
    <div className="app">
      {blocked ? null : <SkipLink target="charts-and-views">{t('app.skipToCharts')}</SkipLink>}
      <Announcer />
      <header className="app-header">
        <div className="brand">
          <img src="./favicon.svg" alt="" width={28} height={28} />
          <div>
            <h1>{t('app.title')}</h1>
            <p className="tagline">{t('app.tagline')}</p>
          </div>
        </div>
        <div className="header-actions">
          <LanguageSwitch />
          <PresenterToggle />
          {blocked ? null : <ModelBadge />}
          <GpuStatusBadge />
          {blocked ? null : <TourLauncher />}
        </div>
      </header>
      <UpdatePrompt />
      <main>
        {blocked ? (
          <Suspense fallback={<p className="muted small">{t('app.loadingGuide')}</p>}>
            <NoWebGpu
              reason={gpu.kind === 'unavailable' ? gpu.reason : 'error'}
              message={gpu.message}
              shortfalls={gpu.kind === 'unavailable' ? gpu.shortfalls : undefined}
              browserError={gpu.kind === 'unavailable' ? gpu.browserError : undefined}
            />
          </Suspense>
        ) : (
          <Playground />
        )}
      </main>
      <footer className="app-footer">
        {t('app.footer')}
        <StoragePersistence />
      </footer>
    </div>
  );
}
