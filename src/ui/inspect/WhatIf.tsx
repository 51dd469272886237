// "What if, on this batch": the knobs of shaping, advantages and clipping, each checked against
// the config's range (a bad value names the field and range and changes nothing), and how the
// batch's clip fraction, KL penalty and losses move. Always labelled as not what was trained.
import { useId, useState } from 'react';
import { Trans, useTranslation } from 'react-i18next';
import type { KlEstimator } from '../../reference/kl.ts';
import { KL_ESTIMATORS } from '../../reference/kl.ts';
import { LOSS_AGGS, type LossAgg } from '../../reference/aggregate.ts';
import type { InspectKnobs, WhatIfDiff } from '../../rl/inspect/index.ts';
import { formatNumber, fullNumber, knobText, parseKnob, ruleOf, WHAT_IF_NUMBERS, type WhatIfNumber } from './format.ts';
import { rangeText } from './text.ts';

function NumberField({ k, knobs, onChange }: { k: WhatIfNumber; knobs: InspectKnobs; onChange(k: InspectKnobs): void }) {
  const { t: tr } = useTranslation('inspect');
  const id = useId();
  const [draft, setDraft] = useState(knobText(knobs[k]));
  const parsed = parseKnob(k, draft);
  const label = tr(`whatIf.knobs.${k}`);
  return (
    <div className="whatif-field">
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        type="text"
        inputMode="decimal"
        name={`whatif-${k}`}
        value={draft}
        placeholder={k === 'dualClip' ? tr('whatIf.off') : undefined}
        aria-invalid={!parsed.ok}
        aria-describedby={parsed.ok ? undefined : `${id}-err`}
        onChange={(e) => {
          const text = e.target.value;
          setDraft(text);
          const p = parseKnob(k, text);
          if (p.ok) onChange({ ...knobs, [k]: p.value });
        }}
      />
      {!parsed.ok && (
        <span id={`${id}-err`} className="field-error" role="alert">
          {tr('whatIf.bad', { label, range: rangeText(ruleOf(k)) })}
        </span>
      )}
    </div>
  );
}

/** The summary's rows: the diff's key and the label's key in the inspect namespace. */
const ROWS = [
  ['clipFraction', 'whatIf.clipFraction'],
  ['clipFractionLower', 'whatIf.clipFractionLower'],
  ['klPenaltyMean', 'whatIf.klPenalty'],
  ['policyLoss', 'whatIf.policyLoss'],
  ['klLoss', 'whatIf.klLoss'],
  ['valueLoss', 'whatIf.valueLoss'],
] as const;

export interface WhatIfProps {
  knobs: InspectKnobs;
  onChange(k: InspectKnobs): void;
  onReset(): void;
  diff: WhatIfDiff | null;
  active: boolean;
  error: string | null;
}

export function WhatIf({ knobs, onChange, onReset, diff, active, error }: WhatIfProps) {
  const { t: tr } = useTranslation('inspect');
  const estId = useId();
  const aggId = useId();
  return (
    <section className={`whatif${active ? ' whatif-active' : ''}`} aria-labelledby="whatif-title">
      <div className="whatif-head">
        <h4 id="whatif-title">{tr('whatIf.heading')}</h4>
        <span className="whatif-tag">{tr('whatIf.banner')}</span>
        <button type="button" className="btn small" onClick={onReset} disabled={!active}>
          {tr('whatIf.reset')}
        </button>
      </div>
      <p className="muted small">{tr('whatIf.help')}</p>
      <div className="whatif-fields">
        {WHAT_IF_NUMBERS.map((k) => (
          <NumberField key={k} k={k} knobs={knobs} onChange={onChange} />
        ))}
        <div className="whatif-field">
          <label htmlFor={estId}>{tr('whatIf.knobs.klEstimator')}</label>
          <select id={estId} value={knobs.klEstimator} onChange={(e) => onChange({ ...knobs, klEstimator: e.target.value as KlEstimator })}>
            {KL_ESTIMATORS.map((x) => (
              <option key={x} value={x}>
                {x}
              </option>
            ))}
          </select>
        </div>
        <div className="whatif-field">
          <label htmlFor={aggId}>{tr('whatIf.knobs.lossAgg')}</label>
          <select id={aggId} value={knobs.lossAgg} onChange={(e) => onChange({ ...knobs, lossAgg: e.target.value as LossAgg })}>
            {LOSS_AGGS.map((x) => (
              <option key={x} value={x}>
                {x}
              </option>
            ))}
          </select>
        </div>
        <label className="whatif-check">
          <input type="checkbox" checked={knobs.klInReward} onChange={(e) => onChange({ ...knobs, klInReward: e.target.checked })} /> {tr('whatIf.klInReward')}
        </label>
        <label className="whatif-check">
          <input type="checkbox" checked={knobs.useKlLoss} onChange={(e) => onChange({ ...knobs, useKlLoss: e.target.checked })} /> {tr('whatIf.klInLoss')}
        </label>
      </div>
      {error && (
        <p className="field-error" role="alert">
          {error}
        </p>
      )}
      {diff && (
        <table className="whatif-summary">
          <caption>
            {tr('whatIf.summaryCaption')}
            {active && <span className="whatif-tag small">{tr('whatIf.banner')}</span>}
          </caption>
          <thead>
            <tr>
              <th scope="col" />
              <th scope="col">{tr('whatIf.actual')}</th>
              <th scope="col">{tr('whatIf.whatIf')}</th>
              <th scope="col">{tr('whatIf.change')}</th>
            </tr>
          </thead>
          <tbody>
            {ROWS.map(([key, label]) => {
              const s = diff.summary[key];
              return (
                <tr key={key} data-key={key}>
                  <th scope="row">{tr(label)}</th>
                  <td className="num" title={fullNumber(s.actual)}>
                    {formatNumber(s.actual)}
                  </td>
                  <td className="num whatif-value" title={fullNumber(s.whatIf)}>
                    {formatNumber(s.whatIf)}
                  </td>
                  <td className={`num${s.change ? (s.change > 0 ? ' up' : ' down') : ''}`}>{s.change === null ? '—' : `${s.change > 0 ? '+' : ''}${formatNumber(s.change)}`}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      {diff && active && (
        <p className="small">
          <Trans
            t={tr}
            i18nKey="whatIf.summaryLine"
            values={{ changes: tr('whatIf.clipSideChanges', { count: diff.clipSideChanges }), value: formatNumber(diff.maxAdvantageChange) }}
            components={{ num: <span className="num" /> }}
          />
        </p>
      )}
    </section>
  );
}
