// "Train it with LoRA": GRPO (or PPO with a critic) on the open model, LoRA adapters on its one
// frozen base, rewarded by the chat arithmetic task, a playground task's rule, or the reward
// function of "2 · Reward" on prompts typed here. Each iteration's numbers as the worker's trainer
// computed them, the task's greedy held-out accuracy before and after, Stop, the trained adapter
// as PEFT's two files, and the whole run as one file (hfRunFile.ts) that opens again with its adapter and training state.
import { useId } from 'react';
import { useTranslation } from 'react-i18next';
import { HF_PRESETS } from '../../rl/hf/hfPresets.ts';
import { HF_TRAIN_RANGES, type HfTrainNumber, type HfTrainReward, type HfTrainSettings, hfTrainProblems, playgroundTaskOf } from '../../rl/hf/hfTrainSettings.ts';
import { TASK_NAMES } from '../../tasks/task.ts';
import { useHf } from '../../store/hfModel.ts';
import { useHfTrain } from '../../store/hfTrain.ts';
import { OWN_MODEL_RUN_ID, useInspection } from '../../store/inspection.ts';
import { HfRunFileNotice } from './HfRecordedRun.tsx';
import { HfRunBoth } from './HfRunBoth.tsx';
import { HfTrainResults } from './HfTrainResults.tsx';
import { teachingViewsIntoView } from '../teach/intoView.ts';

const flows = () => import('../../store/hfFlows.ts').then((m) => m.hfFlows());

/** The response of an own-model iteration in the Inspect tab (the teaching views open it), brought into view. */
function openInInspector(iter: number, row: number): void {
  useInspection.getState().focusOn({ runId: OWN_MODEL_RUN_ID, iter, row });
  teachingViewsIntoView();
}

/** Whether the settings are a preset's as it set them (what it does is shown while they are). */
const sameSettings = (a: HfTrainSettings, b: HfTrainSettings) => (Object.keys(a) as (keyof HfTrainSettings)[]).every((k) => k === 'seed' || a[k] === b[k]);

export function HfTrainPanel() {
  const { t, i18n } = useTranslation('notices');
  // Run both's arms are the presets, in order.
  const presetName = (arm: number) => (HF_PRESETS[arm] ? t(`hf.train.preset.${HF_PRESETS[arm].id}.name`) : '');
  const id = useId();
  const model = useHf((s) => s.model)!;
  const s = useHfTrain((st) => st.settings);
  const set = useHfTrain((st) => st.setSettings);
  const running = useHfTrain((st) => st.running);
  const stopping = useHfTrain((st) => st.stopping);
  const ended = useHfTrain((st) => st.ended);
  const problem = useHfTrain((st) => st.problem);
  const trained = useHfTrain((st) => st.trained);
  const downloadProblem = useHfTrain((st) => st.downloadProblem);
  const adapter = useHfTrain((st) => st.adapter);
  const iterationsDone = useHfTrain((st) => st.iterationsDone);
  const loadProblem = useHfTrain((st) => st.loadProblem);
  const keepProblem = useHfTrain((st) => st.keepProblem);
  const keptOffer = useHfTrain((st) => st.keptOffer);
  const rows = useHfTrain((st) => st.rows);
  const runOf = useHfTrain((st) => st.runOf);
  const compared = useHfTrain((st) => st.compared);
  const clearCompared = useHfTrain((st) => st.clearCompared);
  const lastIter = rows.at(-1)?.iter;
  const inspectable = useInspection((st) => st.traces.some((c) => c.runId === OWN_MODEL_RUN_ID && c.trace.iter === lastIter));
  const evals = useHfTrain((st) => st.evals);
  const problems = hfTrainProblems(s, model);
  const problemOf = (f: string) => problems.find((p) => p.field === f);
  const num = (v: string) => (v.trim() === '' ? Number.NaN : Number(v));
  const field = (name: HfTrainNumber, step: string) => {
    const p = problemOf(name);
    const label = t(`hf.train.${name}`);
    const r = HF_TRAIN_RANGES[name];
    return (
      <label className="hf-field">
        <span>{label}</span>
        <input
          type="number"
          step={step}
          min={r.min}
          max={r.max}
          value={Number.isNaN(s[name]) ? '' : s[name]}
          disabled={running}
          aria-invalid={p ? true : undefined}
          aria-describedby={p ? `${id}-${name}` : undefined}
          onChange={(e) => set({ [name]: num(e.target.value) })}
          data-testid={`hf-train-${name}`}
        />
        {p ? (
          <span className="field-problem small" id={`${id}-${name}`}>
            {t(`hf.train.rule.${p.rule}`, { field: label, ...p.params })}
          </span>
        ) : null}
      </label>
    );
  };
  const other = problems.filter((p) => p.field === 'prompts' || p.field === 'chat');
  return (
    <section className="hf-trainer" aria-labelledby={`${id}-title`} data-testid="hf-trainer">
      <h4 id={`${id}-title`}>{t('hf.train.title')}</h4>
      <p className="small muted">{t('hf.train.intro')}</p>
      {keptOffer && !running ? (
        <p className="small" data-testid="hf-train-kept">
          {t('hf.train.keptOffer', { count: keptOffer.iterations })}{' '}
          {keptOffer.runBoth ? (
            <>
              {keptOffer.runBoth.iterations > 0
                ? t('hf.train.keptRunBoth', {
                    arm: keptOffer.runBoth.arm + 1,
                    arms: keptOffer.runBoth.arms,
                    name: presetName(keptOffer.runBoth.arm),
                    count: keptOffer.runBoth.iterations,
                  })
                : t('hf.train.keptRunBothNext', { arm: keptOffer.runBoth.arm + 1, arms: keptOffer.runBoth.arms, name: presetName(keptOffer.runBoth.arm) })}{' '}
              <button type="button" className="btn small" onClick={() => void flows().then((f) => f.continueRunBoth())} data-testid="hf-train-continue-run-both">
                {t('hf.train.continueRunBoth')}
              </button>{' '}
            </>
          ) : null}
          <button type="button" className="btn small" onClick={() => void flows().then((f) => f.continueKept())} data-testid="hf-train-continue-kept">
            {t('hf.train.continueKept')}
          </button>
        </p>
      ) : null}
      {adapter ? (
        <p className="small" data-testid="hf-train-adapter">
          {adapter.info
            ? t('hf.train.adapterInfo', {
                source: t(`hf.train.source.${adapter.source}`),
                r: adapter.info.r,
                alpha: adapter.info.alpha,
                targets: adapter.info.targets.join(', '),
                count: iterationsDone,
              })
            : t('hf.train.adapterTrained', { count: iterationsDone })}{' '}
          {adapter.file ? (
            <>
              <span className="badge recorded-badge" data-testid="hf-train-recorded">
                {t('hf.train.recordedBadge')}
              </span>{' '}
              {t('hf.train.recordedFrom', { fileName: adapter.file.fileName, date: new Date(adapter.file.savedAt).toLocaleString(i18n.language) })}{' '}
            </>
          ) : null}
          {t(adapter.withMoments ? 'hf.train.continueExact' : 'hf.train.continueFresh')}
        </p>
      ) : null}
      <fieldset className="buttons hf-presets">
        <legend className="small">{t('hf.train.presetsLabel')}</legend>
        {HF_PRESETS.map((p) => (
          <button key={p.id} type="button" className="btn small" disabled={running} onClick={() => set(p.settings)} data-testid={`hf-train-preset-${p.id}`}>
            {t(`hf.train.preset.${p.id}.name`)}
          </button>
        ))}
      </fieldset>
      <HfRunBoth model={model} />
      {HF_PRESETS.filter((p) => sameSettings(p.settings, s)).map((p) => (
        <p key={p.id} className="small muted" data-testid="hf-train-preset-about">
          {t(`hf.train.preset.${p.id}.about`)}
        </p>
      ))}
      <div className="hf-knobs">
        <label className="hf-field">
          <span>{t('hf.train.reward')}</span>
          <select value={s.reward} disabled={running} onChange={(e) => set({ reward: e.target.value as HfTrainReward })} data-testid="hf-train-reward">
            <option value="chat-arithmetic">{t('hf.train.rewardTask')}</option>
            {TASK_NAMES.map((task) => (
              <option key={task} value={task}>
                {t('hf.train.rewardPlayground', { task })}
              </option>
            ))}
            <option value="function">{t('hf.train.rewardFunction')}</option>
          </select>
        </label>
        <label className="hf-field">
          <span>{t('hf.train.estimator')}</span>
          <select value={s.estimator} disabled={running} onChange={(e) => set({ estimator: e.target.value as 'group_norm' | 'gae' })} data-testid="hf-train-estimator">
            <option value="group_norm">{t('hf.train.estimatorGrpo')}</option>
            <option value="gae">{t('hf.train.estimatorGae')}</option>
          </select>
        </label>
      </div>
      {s.reward === 'function' ? (
        <>
          <label className="hf-prompt">
            <span>{t('hf.train.prompts')}</span>
            <textarea
              rows={3}
              value={s.prompts}
              disabled={running}
              aria-invalid={problemOf('prompts') ? true : undefined}
              onChange={(e) => set({ prompts: e.target.value })}
              data-testid="hf-train-prompts"
            />
          </label>
          <p className="small muted">{t('hf.train.functionHelp')}</p>
          <label className="hf-check">
            <input type="checkbox" checked={s.chat && model.hasChatTemplate} disabled={running || !model.hasChatTemplate} onChange={(e) => set({ chat: e.target.checked })} />
            <span>{model.hasChatTemplate ? t('hf.chat') : t('hf.noChatTemplate')}</span>
          </label>
        </>
      ) : (
        <p className="small muted" data-testid="hf-train-task-help">
          {playgroundTaskOf(s.reward) ? t('hf.train.playgroundTaskHelp', { task: s.reward }) : t('hf.train.taskHelp')}
        </p>
      )}
      <div className="hf-knobs">
        {field('loraRank', '1')}
        {field('iterations', '1')}
        {field('promptsPerBatch', '1')}
        {field('samplesPerPrompt', '1')}
        {field('maxNewTokens', '1')}
        {field('ppoEpochs', '1')}
        {field('miniBatches', '1')}
        {field('lr', '0.00001')}
        {field('klCoef', '0.001')}
        {field('seed', '1')}
      </div>
      {other.map((p) => (
        <p key={p.field} className="field-problem small" data-testid={`hf-train-problem-${p.field}`}>
          {t(`hf.train.rule.${p.rule}`, p.params)}
        </p>
      ))}
      <div className="buttons">
        {running ? (
          <button type="button" className="btn small" disabled={stopping} onClick={() => void flows().then((f) => f.stopTraining())} data-testid="hf-train-stop">
            {stopping ? t('hf.train.stopping') : t('hf.train.stop')}
          </button>
        ) : (
          <button type="button" className="btn primary small" disabled={problems.length > 0} onClick={() => void flows().then((f) => f.train())} data-testid="hf-train-start">
            {t('hf.train.start')}
          </button>
        )}
        <button
          type="button"
          className="btn small"
          disabled={running || !trained || problems.length > 0}
          onClick={() => void flows().then((f) => f.train(true))}
          data-testid="hf-train-continue"
        >
          {t('hf.train.continue')}
        </button>
        <button type="button" className="btn small" disabled={running || !trained} onClick={() => void flows().then((f) => f.downloadAdapter())} data-testid="hf-train-download">
          {t('hf.train.download')}
        </button>
        <button
          type="button"
          className="btn small"
          disabled={running || !trained || rows.length === 0}
          onClick={() => void flows().then((f) => f.saveRun())}
          data-testid="hf-train-save-run"
        >
          {t('hf.train.runSave')}
        </button>
        <label className="btn small hf-train-load">
          {t('hf.train.load')}
          <input
            type="file"
            accept=".zip,.json,.safetensors"
            multiple
            disabled={running}
            className="visually-hidden"
            onChange={(e) => {
              const picked = [...(e.target.files ?? [])];
              e.target.value = '';
              if (picked.length > 0) void flows().then((f) => f.loadAdapterFiles(picked));
            }}
            data-testid="hf-train-load"
          />
        </label>
      </div>
      {running ? (
        <p className="small" role="status" data-testid="hf-train-status">
          {t('hf.train.running')}
        </p>
      ) : ended && !problem ? (
        <p className="small" role="status" data-testid="hf-train-status">
          {t(ended.stopped ? 'hf.train.endedStopped' : 'hf.train.ended', { count: ended.iterations })}
        </p>
      ) : null}
      {problem ? (
        <p className="notice error" role="alert" data-testid="hf-train-problem">
          {t('hf.train.refused', { problem })}
        </p>
      ) : null}
      {loadProblem !== null ? (
        <p className="notice error" role="alert" data-testid="hf-train-load-problem">
          {t('hf.train.loadRefused', { problem: loadProblem })}
        </p>
      ) : null}
      <HfRunFileNotice />
      {keepProblem !== null ? <p className="small muted">{t('hf.train.keepRefused', { problem: keepProblem })}</p> : null}
      {downloadProblem !== null ? (
        <p className="notice error" role="alert">
          {t('hf.train.downloadRefused', { problem: downloadProblem })}
        </p>
      ) : null}
      <HfTrainResults
        rows={rows}
        evals={evals}
        onInspect={inspectable ? openInInspector : undefined}
        settings={runOf?.model === model.label ? runOf.settings : null}
        comparison={{ compared: compared.filter((c) => c.model === model.label), onClear: clearCompared }}
      />
    </section>
  );
}
