// "Your own model…": a Hugging Face model folder picked (a folder picker or a drop), read in the
// worker (nothing leaves the machine), with a progress bar while its weights are read and
// uploaded; the refusal naming the file or field when it cannot be opened; the copy kept in this
// browser offered after a reload, and forgotten on request; then the sampling panel. A saved run
// opens here too, shown as recorded until its model is open (HfRecordedRun.tsx).
import { type DragEvent, useRef, useState } from 'react';
import { Trans, useTranslation } from 'react-i18next';
import { pickedFiles, topLevelFiles } from '../../store/hfFolderFiles.ts';
import { useApp } from '../../store/appStore.ts';
import { useHf } from '../../store/hfModel.ts';
import { formatBytes } from '../../model/hf/memoryPlan.ts';
import { SHIPPED_CHAT_MODEL } from '../../model/hf/shippedModel.ts';
import { droppedFolder } from './droppedFolder.ts';
import { HfOpenRunButton, HfPresetResults, HfRecordedRun, HfRunFileNotice } from './HfRecordedRun.tsx';
import { HfSamplePanel } from './HfSamplePanel.tsx';
import { HfTrainPanel } from './HfTrainPanel.tsx';
import './hf.css';

const flows = () => import('../../store/hfFlows.ts').then((m) => m.hfFlows());

function ModelLine() {
  const { t } = useTranslation('notices');
  const m = useHf((s) => s.model);
  if (!m) return null;
  return (
    <p className="small" data-testid="hf-model">
      {t('hf.modelLine', {
        label: m.label,
        architecture: m.architecture,
        layers: m.nLayer,
        width: m.dModel,
        heads: m.nHead,
        kvHeads: m.nKvHead,
        vocab: m.vocab,
        params: m.parameters.toLocaleString(),
        bytes: formatBytes(m.deviceBytes),
        dtype: m.weightDtype,
      })}
    </p>
  );
}

function Loading() {
  const { t } = useTranslation('notices');
  const l = useHf((s) => s.loading);
  if (!l) return null;
  const known = l.totalBytes > 0;
  return (
    <div className="hf-loading" data-testid="hf-loading">
      <p className="small">
        {known ? t('hf.loading', { label: l.label, done: formatBytes(l.doneBytes), total: formatBytes(l.totalBytes) }) : t('hf.checking', { label: l.label })}
      </p>
      <progress max={known ? l.totalBytes : undefined} value={known ? l.doneBytes : undefined} aria-label={t('hf.progressLabel')} />
    </div>
  );
}

export function HfModelPanel() {
  const { t } = useTranslation('notices');
  const input = useRef<HTMLInputElement>(null);
  const [over, setOver] = useState(false);
  const loading = useHf((s) => s.loading !== null);
  const model = useHf((s) => s.model);
  const kept = useHf((s) => s.kept);
  const problem = useHf((s) => s.problem);
  const recovered = useHf((s) => s.recovered);
  const keepProblem = useHf((s) => s.keepProblem);
  const task = useApp((s) => s.config.task);
  // The directory picker's attribute is not in React's types.
  const dirAttrs = { webkitdirectory: '', directory: '' } as Record<string, string>;

  const onDrop = (e: DragEvent<HTMLDivElement>) => {
    e.preventDefault();
    setOver(false);
    if (loading) return;
    const picked = droppedFolder(e.dataTransfer, t('hf.droppedFiles'));
    void Promise.all([picked, flows()]).then(([folder, f]) => f.openPicked(folder));
  };
  const keptIsOpen = kept !== null && model !== null && model.label === kept.label;

  return (
    <section className="hf-panel" aria-labelledby="hf-title" data-testid="hf-panel">
      <h3 id="hf-title">{t('hf.title')}</h3>
      <p className="muted small">
        <Trans t={t} i18nKey="hf.intro" components={{ code: <code /> }} />
      </p>
      {/* biome-ignore lint/a11y/noStaticElementInteractions: a drop target for the mouse; the button inside is the keyboard's way to the same folder */}
      <div
        className={`hf-drop${over ? ' over' : ''}`}
        data-testid="hf-drop"
        onDragOver={(e) => {
          e.preventDefault();
          setOver(true);
        }}
        onDragLeave={() => setOver(false)}
        onDrop={onDrop}
      >
        <button type="button" className="btn small" disabled={loading} onClick={() => input.current?.click()} data-testid="hf-pick">
          {t('hf.pick')}
        </button>
        <span className="muted small">{t('hf.dropHint')}</span>
        <input
          ref={input}
          type="file"
          multiple
          {...dirAttrs}
          className="visually-hidden"
          aria-label={t('hf.folderLabel')}
          data-testid="hf-folder"
          onChange={(e) => {
            const list = e.target.files;
            if (!list || list.length === 0) return;
            const folder = topLevelFiles(pickedFiles(list), t('hf.pickedFolder'));
            e.target.value = '';
            void flows().then((f) => f.openPicked(folder));
          }}
        />
      </div>
      <div className="buttons hf-shipped">
        <button
          type="button"
          className="btn small"
          disabled={loading}
          onClick={() => void flows().then((f) => f.openShipped(import.meta.env.BASE_URL))}
          data-testid="hf-open-shipped"
        >
          {t('hf.openShipped')}
        </button>
        <span className="muted small">{t('hf.shippedHint', { size: formatBytes(SHIPPED_CHAT_MODEL.bytes) })}</span>
      </div>
      <div className="buttons hf-shipped">
        <button
          type="button"
          className="btn small"
          disabled={loading}
          onClick={() => void flows().then((f) => f.openPlaygroundModel(import.meta.env.BASE_URL))}
          data-testid="hf-open-playground"
        >
          {t('hf.openPlaygroundModel')}
        </button>
        <span className="muted small">{t('hf.playgroundModelHint', { task })}</span>
      </div>
      <div className="buttons hf-shipped">
        <HfOpenRunButton />
        <span className="muted small">{t('hf.train.runOpenHint')}</span>
      </div>
      <HfPresetResults />
      {model ? null : <HfRunFileNotice />}
      {kept ? (
        <div className="buttons hf-kept" data-testid="hf-kept">
          <span className="small">{t('hf.kept', { label: kept.label, files: kept.files, bytes: formatBytes(kept.bytes) })}</span>
          {keptIsOpen ? null : (
            <button type="button" className="btn small" disabled={loading} onClick={() => void flows().then((f) => f.openKept())} data-testid="hf-open-kept">
              {t('hf.openKept', { label: kept.label })}
            </button>
          )}
          <button type="button" className="btn small ghost" disabled={loading} onClick={() => void flows().then((f) => f.forget())} data-testid="hf-forget">
            {t('hf.forget')}
          </button>
        </div>
      ) : model ? (
        <div className="buttons">
          <button type="button" className="btn small ghost" disabled={loading} onClick={() => void flows().then((f) => f.forget())} data-testid="hf-forget">
            {t('hf.forget')}
          </button>
        </div>
      ) : null}
      <Loading />
      {problem ? (
        <p className="notice error" role="alert" data-testid="hf-problem">
          {problem.lost ? t('hf.lost', { label: problem.label }) : t('hf.refused', { label: problem.label, problem: problem.message })}
          {model ? ` ${t('hf.stillOpen', { label: model.label })}` : ''}
        </p>
      ) : null}
      {recovered ? (
        <p className="notice info small" role="status" data-testid="hf-recovered">
          {recovered.iterations === null ? t('hf.recovered', { label: recovered.label }) : t('hf.recoveredWithAdapter', { label: recovered.label, iter: recovered.iterations })}
        </p>
      ) : null}
      {keepProblem ? (
        <p className="notice warn small" data-testid="hf-keep-problem">
          {t('hf.notKept', { problem: keepProblem })}
        </p>
      ) : null}
      <ModelLine />
      <HfRecordedRun />
      {model ? <HfSamplePanel /> : null}
      {model ? <HfTrainPanel /> : null}
    </section>
  );
}
