// The "1 · SFT" stage: supervised fine-tuning of the actor in the tab, at the knobs' size, on the
// task's own recipe (as `npm run pretrain`), with its loss curve, the held-out greedy metrics at
// each phase's end, progress and ETA; the model it leaves is kept and trained by PPO (stage 2).
// Also: download that model, load one from a file, or go back to the shipped one.
import { lazy, Suspense, useEffect, useRef } from 'react';
import { Trans, useTranslation } from 'react-i18next';
import { useApp } from '../store/appStore.ts';
import { formatDims, formatSeconds, sftEtaSeconds } from '../store/modelSize.ts';
import { useHf } from '../store/hfModel.ts';
import { useSft, type SftLossPoint, type SftRunView } from '../store/sftState.ts';
import { ModelBadge } from './ModelBadge.tsx';

const flows = () => import('../store/sftFlows.ts');
const hfFlows = () => import('../store/hfFlows.ts').then((m) => m.hfFlows());
/** "Your own model…": loaded when first shown (a model kept in this browser shows it after a reload). */
const HfModelPanel = lazy(() => import('./hf/HfModelPanel.tsx').then((m) => ({ default: m.HfModelPanel })));

/** The loss so far as a small line chart (steps across, loss up), no chart library needed. */
function LossCurve({ points, totalSteps }: { points: SftLossPoint[]; totalSteps: number }) {
  const { t } = useTranslation('notices');
  const W = 280;
  const H = 90;
  if (points.length === 0) return <p className="muted small">{t('sft.lossEmpty')}</p>;
  const max = Math.max(...points.map((p) => p.loss));
  const min = Math.min(0, ...points.map((p) => p.loss));
  const x = (s: number) => (s / Math.max(1, totalSteps)) * W;
  const y = (l: number) => H - ((l - min) / Math.max(1e-9, max - min)) * H;
  return (
    <svg
      className="sft-loss"
      viewBox={`0 0 ${W} ${H}`}
      width={W}
      height={H}
      role="img"
      aria-label={t('sft.lossLabel', { loss: points[points.length - 1].loss.toFixed(3) })}
      data-testid="sft-loss"
    >
      <polyline fill="none" stroke="currentColor" strokeWidth={1.5} points={points.map((p) => `${x(p.step).toFixed(1)},${y(p.loss).toFixed(1)}`).join(' ')} />
    </svg>
  );
}

function metricsText(m: Record<string, number>): string {
  return Object.entries(m)
    .map(([k, v]) => `${k} ${Number.isInteger(v) ? v : v.toFixed(3)}`)
    .join(', ');
}

function RunView({ run }: { run: SftRunView }) {
  const { t } = useTranslation('notices');
  const eta = sftEtaSeconds(run.doneSteps, run.totalSteps, run.seconds);
  const share = run.totalSteps > 0 ? run.doneSteps / run.totalSteps : 0;
  const state =
    run.status === 'running'
      ? t(run.phases ? 'sft.runningOf' : 'sft.running', { phase: run.phase + 1, phases: run.phases, done: run.doneSteps, total: run.totalSteps || '…' }) +
        (eta === null ? '' : t('sft.eta', { eta: formatSeconds(eta) }))
      : run.status === 'done'
        ? t('sft.done', { steps: run.totalSteps, time: formatSeconds(run.seconds) })
        : run.status === 'cancelled'
          ? t('sft.cancelled')
          : t('sft.failed', { message: run.message ?? t('selftest.unknownError') });
  return (
    <div className="sft-run" data-testid="sft-run" data-status={run.status}>
      <p className="small">
        <Trans t={t} i18nKey="sft.runOf" values={{ dims: formatDims(run.dims), task: run.task, state }} components={{ state: <span data-testid="sft-state" /> }} />
      </p>
      {run.status === 'running' ? <progress max={1} value={share} aria-label={t('sft.progressLabel')} /> : null}
      <LossCurve points={run.loss} totalSteps={run.totalSteps} />
      {run.evals.length > 0 ? (
        <ul className="small sft-evals" data-testid="sft-evals">
          {run.evals.map((e) => (
            <li key={e.phase}>{t('sft.evalLine', { phase: e.phase + 1, label: e.label, metrics: metricsText(e.metrics) })}</li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

export function SftPanel() {
  const { t } = useTranslation('notices');
  const config = useApp((s) => s.config);
  const run = useSft((s) => s.run);
  const kept = useSft((s) => s.models[config.task]);
  const problem = useSft((s) => s.problem);
  const input = useRef<HTMLInputElement>(null);
  const hfShown = useHf((s) => s.shown);
  const showHf = useHf((s) => s.show);
  const running = run?.status === 'running';
  useEffect(() => {
    void hfFlows().then((f) => f.restore());
  }, []);
  const dims = { nLayer: config.nLayer, nHead: config.nHead, dModel: config.dModel };
  return (
    <section className="card sft-panel" aria-labelledby="sft-title" data-testid="sft-panel">
      <div className="card-head">
        <h2 id="sft-title">{t('sft.title')}</h2>
        <ModelBadge />
      </div>
      <p className="muted small">
        <Trans t={t} i18nKey="sft.intro" components={{ code: <code /> }} />
        {kept?.meta ? t('sft.nowTrained', { dims: formatDims(kept.dims), seed: kept.meta.seed, steps: kept.meta.steps, backend: kept.meta.backend }) : ''}
        {kept && !kept.meta ? t('sft.nowFile', { dims: formatDims(kept.dims), fileName: kept.fileName ?? t('sft.aFile') }) : ''}
      </p>
      <div className="buttons">
        {running ? (
          <button type="button" className="btn small" onClick={() => void flows().then((f) => f.cancelSftModel())} data-testid="sft-cancel">
            {t('sft.cancel')}
          </button>
        ) : (
          <button type="button" className="btn small" onClick={() => void flows().then((f) => f.trainSftModel(f.sftPhaseStepCap()))} data-testid="sft-train">
            {t('sft.train', { dims: formatDims(dims) })}
          </button>
        )}
        <button type="button" className="btn small" disabled={!kept || running} onClick={() => void flows().then((f) => f.downloadSftModel())} data-testid="sft-download">
          {t('sft.download', { ext: '.safetensors' })}
        </button>
        <button
          type="button"
          className="btn small"
          disabled={running}
          title={t('sft.downloadGpt2Title', { loader: 'GPT2LMHeadModel.from_pretrained' })}
          onClick={() => void flows().then((f) => f.downloadSftModelAsGpt2(import.meta.env.BASE_URL))}
          data-testid="sft-download-gpt2"
        >
          {t('sft.downloadGpt2')}
        </button>
        <button type="button" className="btn small" disabled={running} onClick={() => input.current?.click()}>
          {t('sft.load')}
        </button>
        <input
          ref={input}
          type="file"
          accept=".safetensors,application/octet-stream"
          className="visually-hidden"
          aria-label={t('sft.fileLabel')}
          data-testid="sft-file"
          onChange={(e) => {
            const file = e.target.files?.[0];
            e.target.value = '';
            if (file) void flows().then((f) => f.loadSftFile(file));
          }}
        />
        {kept && !running ? (
          <button type="button" className="btn small ghost" onClick={() => void flows().then((f) => f.switchToShippedModel())}>
            {t('sft.useShipped')}
          </button>
        ) : null}
        <button type="button" className="btn small" aria-expanded={hfShown} onClick={() => showHf(!hfShown)} data-testid="hf-show">
          {t('sft.ownModel')}
        </button>
      </div>
      {problem ? (
        <p className="notice error" role="alert" data-testid="sft-problem">
          {problem}
        </p>
      ) : null}
      {run ? <RunView run={run} /> : null}
      {hfShown ? (
        <Suspense fallback={null}>
          <HfModelPanel />
        </Suspense>
      ) : null}
    </section>
  );
}
