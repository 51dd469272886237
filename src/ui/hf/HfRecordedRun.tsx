// A saved run of the visitor's own model (hfRunFile.ts): "Open a saved run…", what opening or
// saving one said, and the run shown as recorded while its model is not the open one — where it
// was trained, its evaluations, curves, rows and last batch's tokens, as the file holds them.
import { useEffect, useId, useRef } from 'react';
import { useTranslation } from 'react-i18next';
import { HF_PRESETS } from '../../rl/hf/hfPresets.ts';
import { useHf } from '../../store/hfModel.ts';
import { hfPresetRunPath } from '../../store/presetResults.ts';
import { otherModel } from '../../store/hfRunFile.ts';
import { useHfTrain } from '../../store/hfTrain.ts';
import { HfTrainResults } from './HfTrainResults.tsx';
import { teachingViewsIntoView } from '../teach/intoView.ts';

const flows = () => import('../../store/hfFlows.ts').then((m) => m.hfFlows());

/** The recorded run's last iteration in the Inspect tab (the teaching views open it), brought into view. */
function inspectRecorded(_iter: number, row: number): void {
  void flows().then((f) => {
    f.inspectRecorded(row);
    teachingViewsIntoView();
  });
}

export function HfOpenRunButton() {
  const { t } = useTranslation('notices');
  const running = useHfTrain((s) => s.running);
  return (
    <label className="btn small hf-train-load">
      {t('hf.train.runOpen')}
      <input
        type="file"
        accept=".json,application/json"
        disabled={running}
        className="visually-hidden"
        onChange={(e) => {
          const picked = e.target.files?.[0];
          e.target.value = '';
          if (picked) void flows().then((f) => f.openRunFile(picked));
        }}
        data-testid="hf-run-open"
      />
    </label>
  );
}

/** Each "Your own model" preset's recorded run on the shipped chat model (`npm run record-runs`), shown at once. */
export function HfPresetResults() {
  const { t } = useTranslation('notices');
  const running = useHfTrain((s) => s.running);
  return (
    <div className="buttons hf-shipped" data-testid="hf-preset-results">
      <span className="small">{t('hf.train.presetResults')}</span>
      {HF_PRESETS.map((p) => (
        <button
          key={p.id}
          type="button"
          className="btn small"
          disabled={running}
          onClick={() => void flows().then((f) => f.openServedRunFile(hfPresetRunPath(p)))}
          data-testid={`hf-preset-result-${p.id}`}
        >
          {t(`hf.train.preset.${p.id}.name`)}
        </button>
      ))}
    </div>
  );
}

/** What Save the run or Open a saved run last said. */
export function HfRunFileNotice() {
  const notice = useHfTrain((s) => s.runFileNotice);
  if (!notice) return null;
  return (
    <p className={`notice ${notice.tone} small`} role={notice.tone === 'error' ? 'alert' : 'status'} data-testid="hf-run-file-notice">
      {notice.text}
    </p>
  );
}

/** The opened run file, while its model is not the open one. */
export function HfRecordedRun() {
  const { t, i18n } = useTranslation('notices');
  const id = useId();
  const recorded = useHfTrain((s) => s.recorded);
  const trained = useHfTrain((s) => s.trained);
  const running = useHfTrain((s) => s.running);
  const iterationsDone = useHfTrain((s) => s.iterationsDone);
  const model = useHf((s) => s.model);
  const section = useRef<HTMLElement>(null);
  const opened = recorded ? `${recorded.fileName} ${recorded.savedAt}` : null;
  // A file just opened (here, from the charts' Open run… or the no-WebGPU guide) is brought into view.
  useEffect(() => {
    if (opened) section.current?.scrollIntoView({ block: 'start' });
  }, [opened]);
  if (!recorded) return null;
  const { run, fileName, savedAt } = recorded;
  const differs = model ? otherModel(run.model, model) : null;
  // Its own model is open but holds another adapter: put on only when asked (putRecordedOnModel).
  const replaces = model !== null && differs === null && trained;
  return (
    <section ref={section} className="hf-recorded" aria-labelledby={`${id}-title`} data-testid="hf-recorded">
      <h4 id={`${id}-title`}>
        {t('hf.train.recordedTitle', { fileName })} <span className="badge recorded-badge">{t('hf.train.recordedBadge')}</span>
      </h4>
      <p className="small">
        {t('hf.train.recordedAbout', {
          label: run.model.label,
          architecture: run.model.architecture,
          layers: run.model.nLayer,
          date: new Date(savedAt).toLocaleString(i18n.language),
          iterations: run.iterations,
        })}{' '}
        {differs ? t('hf.train.recordedOtherModel', { differs }) : replaces ? t('hf.train.recordedReplaces', { iterations: iterationsDone }) : t('hf.train.recordedOpenModel')}
      </p>
      <div className="buttons">
        {replaces ? (
          <button type="button" className="btn small" disabled={running} onClick={() => void flows().then((f) => f.putRecordedAdapter())} data-testid="hf-recorded-put">
            {t('hf.train.recordedPut')}
          </button>
        ) : null}
        <button type="button" className="btn small ghost" onClick={() => void flows().then((f) => f.closeRecorded())} data-testid="hf-recorded-close">
          {t('hf.train.recordedClose')}
        </button>
      </div>
      <HfTrainResults rows={run.rows} evals={run.evals} settings={run.settings} idPrefix="hf-recorded-" onInspect={run.lastTrace ? inspectRecorded : undefined} />
    </section>
  );
}
