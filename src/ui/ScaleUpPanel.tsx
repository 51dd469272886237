// "Scale it up": the current config as a verl or OpenRLHF launch command, with a copy button.
// Recomputed from the store on every config change, so it always matches the knobs on screen.
import { useMemo, useState } from 'react';
import { useApp } from '../store/appStore.ts';
import { copyText } from './copyText.ts';
import { renderCommand, scaleUpCommand, type ScaleUpTarget } from './scaleUp.ts';

const TARGETS: { id: ScaleUpTarget; title: string }[] = [
  { id: 'verl', title: 'verl' },
  { id: 'openrlhf', title: 'OpenRLHF' },
];

export function ScaleUpPanel() {
  const config = useApp((s) => s.config);
  const [target, setTarget] = useState<ScaleUpTarget>('verl');
  const [copied, setCopied] = useState<'yes' | 'failed' | null>(null);
  const text = useMemo(() => renderCommand(scaleUpCommand(target, config)), [target, config]);
  return (
    <section className="scale-up card" aria-labelledby="scale-up-title" data-testid="scale-up">
      <div className="card-head">
        <h2 id="scale-up-title">Scale it up</h2>
        <div className="toolbar">
          <div className="segmented" role="radiogroup" aria-label="Framework">
            {TARGETS.map((t) => (
              <button
                key={t.id}
                type="button"
                role="radio"
                aria-checked={target === t.id}
                className={`btn small${target === t.id ? ' selected' : ''}`}
                onClick={() => {
                  setTarget(t.id);
                  setCopied(null);
                }}
              >
                {t.title}
              </button>
            ))}
          </div>
          <button
            type="button"
            className="btn small primary"
            aria-label={`Copy the ${target === 'verl' ? 'verl' : 'OpenRLHF'} command`}
            onClick={() => void copyText(text).then((ok) => setCopied(ok ? 'yes' : 'failed'))}
          >
            {copied === 'yes' ? 'Copied' : 'Copy'}
          </button>
        </div>
      </div>
      <p className="muted small scale-up-lead">
        The same hyperparameters as a launch command for a real cluster. Knobs without a counterpart are named in the <code>#</code> lines.
        {copied === 'failed' ? <span role="alert"> Copying was blocked by the browser: select the text and copy it by hand.</span> : null}
      </p>
      <pre className="command" tabIndex={0} aria-label={`${target} command line`} data-testid="scale-up-command">
        {text}
      </pre>
    </section>
  );
}
