// "Scale it up": the current config as a runnable verl or OpenRLHF job. The launch script is shown
// (recomputed on every config change) with a copy button; "Download … job" builds the whole folder
// (Parquet prompts, reward.py, script, README) as a zip in the page, loading the writer on demand.
// This panel itself is loaded lazily by Playground, so none of the export code is in the first chunk.
import { useId, useMemo, useState } from 'react';
import { Trans, useTranslation } from 'react-i18next';
import { ENGINE_TITLES, ENGINES, type Engine } from '../export/engines.ts';
import { engineCommand, renderScript } from '../export/script.ts';
import { DEFAULT_JOB_OPTIONS, GPU_RANGE, planJob } from '../export/plan.ts';
import { useApp } from '../store/appStore.ts';
import { copyText } from './copyText.ts';
import { downloadBlob } from '../store/download.ts';
import type { ActorModel } from '../store/modelSize.ts';
import { useActorModel } from './ModelBadge.tsx';
import { jobErrorText } from './scaleUpText.ts';

type Preview = { ok: true; text: string } | { ok: false; message: string };

function preview(config: Parameters<typeof planJob>[0], engine: Engine, gpus: number, actor: ActorModel): Preview {
  try {
    const plan = planJob(config, { engine, gpus, trainRows: DEFAULT_JOB_OPTIONS.trainRows, actor });
    return { ok: true, text: renderScript(plan, engineCommand(plan)) };
  } catch (e) {
    return { ok: false, message: jobErrorText(e) };
  }
}

export default function ScaleUpPanel() {
  // Suspends until the namespace arrives; re-renders (and re-words the problem) on a language switch.
  const { t, i18n } = useTranslation('exportJob');
  const config = useApp((s) => s.config);
  // The job describes the model the run trains, not the knobs (they may not apply).
  const actor = useActorModel();
  const engineGroup = useId();
  const [engine, setEngine] = useState<Engine>('verl');
  const [gpusText, setGpusText] = useState(String(DEFAULT_JOB_OPTIONS.gpus));
  const [copied, setCopied] = useState<'yes' | 'failed' | null>(null);
  const [busy, setBusy] = useState<Engine | null>(null);
  const [downloadError, setDownloadError] = useState<string | null>(null);
  const gpus = Number(gpusText);
  const language = i18n.language;
  // biome-ignore lint/correctness/useExhaustiveDependencies: a problem is worded in the page's language, so a switch recomputes it
  const shown = useMemo(() => preview(config, engine, gpus, actor), [config, engine, gpus, actor, language]);

  const download = async (target: Engine) => {
    setBusy(target);
    setDownloadError(null);
    try {
      // The Parquet writer, the dataset and the zip writer load only when a job is downloaded.
      const [{ buildJob }, { zipJob }] = await Promise.all([import('../export/job.ts'), import('../export/zip.ts')]);
      const job = buildJob(config, { engine: target, gpus, trainRows: DEFAULT_JOB_OPTIONS.trainRows, actor });
      const name = `ppo-playground-${config.task}-${target}`;
      const zip = zipJob(name, job.files);
      downloadBlob(new Blob([zip as Uint8Array<ArrayBuffer>], { type: 'application/zip' }), `${name}.zip`);
    } catch (e) {
      setDownloadError(t('notBuilt', { engine: ENGINE_TITLES[target], error: jobErrorText(e) }));
    } finally {
      setBusy(null);
    }
  };

  return (
    <section className="scale-up card" aria-labelledby="scale-up-title" data-testid="scale-up">
      <div className="card-head">
        <h2 id="scale-up-title">{t('title')}</h2>
        <div className="toolbar">
          <div className="segmented" role="radiogroup" aria-label={t('framework')}>
            {ENGINES.map((id) => (
              <label key={id} className={`btn small${engine === id ? ' selected' : ''}`}>
                <input
                  type="radio"
                  name={engineGroup}
                  value={id}
                  checked={engine === id}
                  onChange={() => {
                    setEngine(id);
                    setCopied(null);
                  }}
                />
                {ENGINE_TITLES[id]}
              </label>
            ))}
          </div>
          <label className="small">
            {t('gpus')}{' '}
            <input
              type="number"
              min={GPU_RANGE.min}
              max={GPU_RANGE.max}
              step={1}
              value={gpusText}
              aria-label={t('gpusLabel')}
              style={{ width: '4em' }}
              onChange={(e) => setGpusText(e.target.value)}
            />
          </label>
          <button
            type="button"
            className="btn small"
            aria-label={t('copyCommand', { engine: ENGINE_TITLES[engine] })}
            disabled={!shown.ok}
            onClick={() => shown.ok && void copyText(shown.text).then((ok) => setCopied(ok ? 'yes' : 'failed'))}
          >
            {copied === 'yes' ? t('copied') : t('copy')}
          </button>
        </div>
      </div>
      <p className="muted small scale-up-lead">
        <Trans i18nKey="lead" ns="exportJob" components={{ code: <code /> }} />
        {copied === 'failed' ? <span role="alert"> {t('copyBlocked')}</span> : null}
      </p>
      <div className="toolbar">
        {ENGINES.map((id) => (
          <button key={id} type="button" className="btn small primary" disabled={busy !== null || !shown.ok} onClick={() => void download(id)}>
            {busy === id ? t('building') : t('download', { engine: ENGINE_TITLES[id] })}
          </button>
        ))}
      </div>
      {downloadError ? (
        <p className="notice warn" role="alert">
          {downloadError}
        </p>
      ) : null}
      {shown.ok ? (
        // biome-ignore lint/a11y/useSemanticElements lint/a11y/noNoninteractiveTabindex: the <pre> is the scroll container (max-height, overflow); tabIndex=0 lets keyboard users scroll it, role="region" names it
        <pre className="command" role="region" tabIndex={0} aria-label={t('commandLabel', { engine })} data-testid="scale-up-command">
          {shown.text}
        </pre>
      ) : (
        <p className="notice warn" role="alert" data-testid="scale-up-problem">
          {shown.message}
        </p>
      )}
    </section>
  );
}
