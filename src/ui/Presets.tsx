// One-click experiment presets, each a card that says the task first, then what to watch, then its
// iteration budget and what the curve will do (the measured promise); the chosen one opens with its
// explanation and, for a paired preset, "Run both". Plus a "copy link" for sharing the exact config.
import { useState } from 'react';
import { PRESETS, presetArms, type Preset } from '../rl/presets.ts';
import { useApp } from '../store/appStore.ts';
import './presets.css';
import { trainer } from '../store/trainerClient.ts';
import { loadPreset } from './loadPreset.ts';

/** A test id from a preset name: "PPO vs GRPO" → "ppo-vs-grpo". */
function presetSlug(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
}

function budgetText(preset: Preset, override: number | null): string {
  const n = override ?? preset.iterations;
  const arms = preset.arms && preset.arms.length > 1 ? ` × ${preset.arms.length} arms` : '';
  return `${n} iterations${arms}`;
}

export function Presets() {
  const chosen = useApp((s) => s.preset);
  const override = useApp((s) => s.budgetOverride);
  const [copied, setCopied] = useState(false);
  const chosenPreset = PRESETS.find((p) => p.name === chosen);
  const choose = (p: Preset) => void loadPreset(p);
  return (
    <section className="presets card" aria-labelledby="presets-title">
      <div className="card-head">
        <h2 id="presets-title">Experiments</h2>
        <button
          type="button"
          className="btn ghost small"
          onClick={() => {
            void navigator.clipboard?.writeText(window.location.href).then(
              () => setCopied(true),
              () => setCopied(false),
            );
          }}
          title="The link holds the whole config, seed included"
        >
          {copied ? 'Link copied' : 'Copy share link'}
        </button>
      </div>
      <ul className="preset-cards">
        {PRESETS.map((p) => (
          <li key={p.name} className={`preset-card${chosen === p.name ? ' selected' : ''}`} data-testid={`preset-card-${presetSlug(p.name)}`}>
            <button type="button" className="preset-name" aria-pressed={chosen === p.name} title={p.explanation} onClick={() => choose(p)}>
              {p.name}
            </button>
            <span className="preset-budget" data-testid="preset-budget">
              {budgetText(p, override)}
            </span>
            <p className="preset-summary" data-testid="preset-summary">
              {p.summary}
            </p>
            <p className="preset-watch" data-testid="preset-watch">
              {p.watch}
            </p>
            <p className={`preset-promise${p.promise ? '' : ' unmeasured'}`} data-testid="preset-promise">
              {p.promise ?? 'Not measured yet: run it and see.'}
            </p>
            {/* The chosen card opens in place: what to watch and Run both sit where the click was. */}
            {chosenPreset === p ? <PresetDetail preset={p} /> : null}
          </li>
        ))}
      </ul>
      {chosenPreset ? null : (
        <p className="preset-explanation muted small" data-testid="preset-explanation">
          Pick an experiment to set the knobs it needs; each comes with what to look for.
        </p>
      )}
    </section>
  );
}

/** The chosen preset: its explanation, its budget, and for a paired preset its arms and "Run both". */
function PresetDetail({ preset }: { preset: Preset }) {
  const sequence = useApp((s) => s.sequence);
  const runState = useApp((s) => s.runState);
  const override = useApp((s) => s.budgetOverride);
  const arms = preset.arms && preset.arms.length > 1 ? presetArms(preset) : null;
  const mine = sequence?.preset === preset.name ? sequence : null;
  const budget = override ?? preset.iterations;
  return (
    <div className="preset-detail" data-testid="preset-detail">
      <p className="preset-explanation" data-testid="preset-explanation">
        {preset.explanation}
      </p>
      {preset.whyNoCritic ? (
        <p className="small" data-testid="preset-why-no-critic">
          {preset.whyNoCritic}
        </p>
      ) : null}
      <p className="small muted">
        Start trains {budget} iterations{override !== null ? ' (set by the link)' : ''} and stops; the ETA above counts down to it. Start again to train on.
      </p>
      {arms ? (
        <div className="preset-arms">
          <span className="small">Arms:</span>
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
            title={`Train ${arms.map((a) => a.label).join(', then ')} for ${budget} iterations each, overlaid in the charts`}
            onClick={() => void trainer.runArms(preset.name)}
          >
            {arms.length === 2 ? 'Run both' : `Run all ${arms.length}`}
          </button>
        </div>
      ) : null}
      {mine ? (
        <p className="sequence-status small" role="status" data-testid="sequence-status">
          Arm {mine.index + 1} of {mine.arms.length}: <strong>{mine.arms[mine.index].label}</strong>
          {mine.stoppedBy
            ? ` stopped by a trainer error (${mine.stoppedBy.length > 120 ? `${mine.stoppedBy.slice(0, 120)}…` : mine.stoppedBy}) — Start retries it, Reset ends Run both (finished arms stay)`
            : runState === 'running'
              ? ' training'
              : ' paused — Start resumes it, Reset stops the sequence (finished arms stay)'}
          .
        </p>
      ) : null}
    </div>
  );
}
