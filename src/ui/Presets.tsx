// One-click experiment presets and a "copy link" for sharing the exact config.
import { useState } from 'react';
import { useApp } from '../store/appStore.ts';
import { PRESETS } from './presets.ts';

export function Presets() {
  const applyConfig = useApp((s) => s.applyConfig);
  const setNotice = useApp((s) => s.setNotice);
  const [chosen, setChosen] = useState<string | null>(null);
  const [copied, setCopied] = useState(false);
  const chosenPreset = PRESETS.find((p) => p.name === chosen);
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
      <div className="preset-buttons">
        {PRESETS.map((p) => (
          <button
            key={p.name}
            type="button"
            className={`btn preset${chosen === p.name ? ' selected' : ''}`}
            title={p.explanation}
            onClick={() => {
              const problems = applyConfig({ ...useApp.getState().config, ...p.values });
              if (problems.length > 0) setNotice({ tone: 'error', text: `Preset not applied: ${problems.map((x) => x.message).join('; ')}` });
              else setChosen(p.name);
            }}
          >
            {p.name}
          </button>
        ))}
      </div>
      <p className="preset-explanation" data-testid="preset-explanation">
        {chosenPreset ? chosenPreset.explanation : 'Pick an experiment to set the knobs it needs; each comes with what to look for.'}
      </p>
    </section>
  );
}
