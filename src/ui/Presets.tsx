// One-click experiment presets, each a card that says the task first, then what to watch, then its
// iteration budget and what the curve will do (the measured promise); the chosen one opens with its
// explanation and, for a paired preset, "Run both". Plus a "copy link" for sharing the exact config.
import { useState } from 'react';
import { Trans, useTranslation } from 'react-i18next';
import type { TFunction } from 'i18next';
import { PRESETS, presetArms, type Preset } from '../rl/presets.ts';
import { useApp } from '../store/appStore.ts';
import { runArmsLabel } from '../store/notices.ts';
import './presets.css';
import { trainer } from '../store/trainerClient.ts';
import { loadPreset } from './loadPreset.ts';
import { ShowResultButton } from './ShowResultButton.tsx';
import { recipeText } from './presetRecipe.ts';

/** A test id from a preset name: "PPO vs GRPO" → "ppo-vs-grpo". */
function presetSlug(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
}

function budgetText(t: TFunction<'presets'>, preset: Preset, override: number | null): string {
  const n = override ?? preset.iterations;
  return preset.arms && preset.arms.length > 1 ? t('budgetArms', { n, arms: preset.arms.length }) : t('budget', { n });
}

type PresetField = 'summary' | 'watch' | 'explanation' | 'whyNoCritic' | 'promise';

/** One of a preset's texts in the page's language; a translation may mark a word as code (<code>good</code>). */
function PresetText({ preset, field }: { preset: Preset; field: PresetField }) {
  const { t } = useTranslation('presets');
  return <Trans t={t} i18nKey={`preset.${preset.id}.${field}`} components={{ code: <code /> }} />;
}

/** The estimator and critic each arm trains, read off the recipe (presetRecipe.ts). */
function PresetRecipe({ preset }: { preset: Preset }) {
  const { t } = useTranslation('presets');
  const { label, text } = recipeText(t, preset);
  return (
    <p className="preset-recipe small" data-testid="preset-recipe">
      <span className="muted">{label}</span> <span className="recipe-text">{text}</span>
    </p>
  );
}

export function Presets() {
  const { t } = useTranslation('presets');
  const chosen = useApp((s) => s.preset);
  const override = useApp((s) => s.budgetOverride);
  const [copied, setCopied] = useState(false);
  const chosenPreset = PRESETS.find((p) => p.name === chosen);
  const choose = (p: Preset) => void loadPreset(p);
  return (
    <section className="presets card" aria-labelledby="presets-title">
      <div className="card-head">
        <h2 id="presets-title">{t('title')}</h2>
        <button
          type="button"
          className="btn ghost small"
          onClick={() => {
            void navigator.clipboard?.writeText(window.location.href).then(
              () => setCopied(true),
              () => setCopied(false),
            );
          }}
          title={t('copyLinkHint')}
        >
          {copied ? t('linkCopied') : t('copyLink')}
        </button>
      </div>
      <ul className="preset-cards">
        {PRESETS.map((p) => (
          <li key={p.name} className={`preset-card${chosen === p.name ? ' selected' : ''}`} data-testid={`preset-card-${presetSlug(p.name)}`}>
            <button type="button" className="preset-name" aria-pressed={chosen === p.name} title={t(`preset.${p.id}.explanation`)} onClick={() => choose(p)}>
              {t(`preset.${p.id}.name`)}
            </button>
            <span className="preset-budget" data-testid="preset-budget">
              {budgetText(t, p, override)}
            </span>
            <p className="preset-summary" data-testid="preset-summary">
              <PresetText preset={p} field="summary" />
            </p>
            <PresetRecipe preset={p} />
            <p className="preset-watch" data-testid="preset-watch">
              <PresetText preset={p} field="watch" />
            </p>
            <p className={`preset-promise${p.promise ? '' : ' unmeasured'}`} data-testid="preset-promise">
              {p.promise ? <PresetText preset={p} field="promise" /> : t('notMeasured')}
            </p>
            {/* The chosen card opens in place: what to watch and Run both sit where the click was. */}
            {chosenPreset === p ? <PresetDetail preset={p} /> : null}
          </li>
        ))}
      </ul>
      {chosenPreset ? null : (
        <p className="preset-explanation muted small" data-testid="preset-explanation">
          {t('intro')}
        </p>
      )}
    </section>
  );
}

/** The chosen preset: its explanation, its budget, and for a paired preset its arms and "Run both". */
function PresetDetail({ preset }: { preset: Preset }) {
  const { t } = useTranslation('presets');
  const sequence = useApp((s) => s.sequence);
  const runState = useApp((s) => s.runState);
  const override = useApp((s) => s.budgetOverride);
  const activePreset = useApp((s) => s.runs.find((r) => r.id === s.activeRunId)?.preset ?? null);
  const arms = preset.arms && preset.arms.length > 1 ? presetArms(preset) : null;
  const mine = sequence?.preset === preset.name ? sequence : null;
  const budget = override ?? preset.iterations;
  return (
    <div className="preset-detail" data-testid="preset-detail">
      <p className="preset-explanation" data-testid="preset-explanation">
        <PresetText preset={preset} field="explanation" />
      </p>
      {preset.whyNoCritic ? (
        <p className="small" data-testid="preset-why-no-critic">
          <PresetText preset={preset} field="whyNoCritic" />
        </p>
      ) : null}
      <p className="small muted">{t(arms ? (override !== null ? 'startTrainsLink' : 'startTrains') : override !== null ? 'trainItTrainsLink' : 'trainItTrains', { n: budget })}</p>
      {arms ? null : (
        <div className="preset-arms">
          <button
            type="button"
            className="btn primary small"
            data-testid="preset-start"
            disabled={runState === 'running' && activePreset === preset.name}
            title={t('startHint', { n: budget })}
            onClick={() => void trainer.startPreset(preset.name)}
          >
            {t('start')}
          </button>
          <ShowResultButton preset={preset} />
        </div>
      )}
      {arms ? (
        <div className="preset-arms">
          <span className="small">{t('arms')}</span>
          {arms.map((a, i) => (
            <span key={a.label} className={`arm-chip${mine?.index === i ? ' current' : ''}`}>
              {a.label}
            </span>
          ))}
          <button
            type="button"
            className="btn primary small"
            data-testid="run-arms"
            disabled={mine !== null && runState === 'running'}
            title={t('runArmsHint', { arms: arms.map((a) => a.label).join(t('armsJoin')), n: budget })}
            onClick={() => void trainer.runArms(preset.name)}
          >
            {runArmsLabel(arms.length)}
          </button>
          <ShowResultButton preset={preset} />
        </div>
      ) : null}
      {mine ? (
        <p className="sequence-status small" role="status" data-testid="sequence-status">
          <Trans
            t={t}
            i18nKey={mine.stoppedBy ? 'armStopped' : runState === 'running' ? 'armTraining' : 'armPaused'}
            values={{
              index: mine.index + 1,
              total: mine.arms.length,
              runArms: runArmsLabel(mine.arms.length),
              label: mine.arms[mine.index].label,
              error: mine.stoppedBy && mine.stoppedBy.length > 120 ? `${mine.stoppedBy.slice(0, 120)}…` : mine.stoppedBy,
            }}
            components={{ b: <strong /> }}
          />
        </p>
      ) : null}
    </div>
  );
}
