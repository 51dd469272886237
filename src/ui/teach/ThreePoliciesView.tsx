// Teaching view "Three policies": for the tokens of one sample, the probability each token had
// under the sampler (π_rollout: temperature, top-k, top-p as sampled), under the actor at the
// experience pass (π_old, which the PPO ratio divides by) and under the actor being trained
// (π_new, at the last minibatch's forward). With top-k/top-p or a sampling temperature different
// from training, π_rollout ≠ π_old; token-level TIS (tisCap) reweights each token's loss by
// min(π_old/π_rollout, cap). With rejection sampling (rolloutRs) on, the tokens the trainer's mask
// dropped from the loss are marked on the π_old line (SampleToken.rejected, read off that mask).
// Also shows DAPO's dynamic-sampling count when it is on.
import { useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { CartesianGrid, Legend, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { shownConfig, useApp } from '../../store/appStore.ts';
import { DapoLine } from './DapoLine.tsx';
import { SamplePicker } from './SamplePicker.tsx';

/** The three policies' names and the log-ratio bound, as formulas: the same in every language. */
const PI = { piRollout: 'π_rollout', piOld: 'π_old', piNew: 'π_new' };
const ABS_DIFF = '|Δ log π|';

const prob = (lp: number | undefined) => (lp === undefined ? null : Math.exp(lp));
/** The mark of a token rejection sampling dropped (Okabe–Ito vermillion, apart from the three lines). */
const REJECTED = '#D55E00';
const REJECTED_MARK = '●';

export function ThreePoliciesView() {
  const { t } = useTranslation('teach');
  const samples = useApp((s) => s.samples);
  const tisCap = useApp((s) => s.config.tisCap);
  // The rejection settings of the run whose batch is on show (the page's own before any run).
  const rolloutRs = useApp((s) => shownConfig(s).rolloutRs);
  const rsThreshold = useApp((s) => shownConfig(s).rolloutRsThreshold);
  const latest = useApp((s) => {
    // The run whose batch is on show: its metrics belong with the samples beside them.
    const run = s.runs.find((r) => r.id === s.batchRunId);
    return run?.metrics[run.metrics.length - 1]?.values;
  });
  const [index, setIndex] = useState(0);
  const row = samples?.rows[Math.min(index, (samples?.rows.length ?? 1) - 1)];
  const data = useMemo(
    () =>
      row?.tokens.map((t, i) => ({
        pos: `${i}:${t.text}`,
        rollout: prob(t.rolloutLogprob),
        old: prob(t.oldLogprob),
        next: prob(t.newLogprob),
        rejectedAt: t.rejected === true ? prob(t.oldLogprob) : null,
      })) ?? [],
    [row],
  );
  const dapo = <DapoLine />;
  if (!samples || !row) {
    return (
      <div className="empty-state" data-testid="view-policies">
        <strong>{t('policies.emptyTitle')}</strong>
        {t('policies.emptyBody')}
      </div>
    );
  }
  const hasRollout = row.tokens.some((t) => t.rolloutLogprob !== undefined);
  // Rejection sampling's verdicts exist only when the shown batch was trained with it.
  const judged = row.tokens.some((t) => t.rejected !== undefined);
  const dropped = row.tokens.filter((t) => t.rejected === true).length;
  const rsText = {
    rs: rolloutRs,
    threshold: rsThreshold,
    n: dropped,
    total: row.tokens.length,
    share: `${(100 * (latest?.rollout_corr_rollout_rs_masked_fraction ?? 0)).toFixed(1)}%`,
  };
  return (
    <div className="teach-view" data-testid="view-policies">
      <div className="toolbar" style={{ marginBottom: 8 }}>
        <SamplePicker rewards={samples.rows.map((r) => r.reward)} index={index} onChange={setIndex} />
        {latest?.rollout_old_kl !== undefined ? (
          <span className="muted small">
            {t('policies.stats', {
              kl: latest.rollout_old_kl.toExponential(2),
              absDiff: ABS_DIFF,
              maxDiff: (latest.rollout_old_max_abs_diff ?? 0).toExponential(2),
              tis: tisCap === null ? t('policies.tisOff') : t('policies.tisCap', { cap: tisCap }),
            })}
          </span>
        ) : null}
      </div>
      <p className="muted small">{t('policies.explain', PI)}</p>
      {hasRollout ? null : <p className="muted small">{t('policies.noRollout')}</p>}
      {judged ? (
        <p className="muted small" data-testid="policies-rejected">
          {dropped > 0 ? t('policies.rejected', rsText) : t('policies.rejectedNone', rsText)}
        </p>
      ) : null}
      <ResponsiveContainer width="100%" height={240}>
        <LineChart data={data} margin={{ top: 8, right: 12, bottom: 0, left: 0 }}>
          <CartesianGrid stroke="#eef0f5" vertical={false} />
          {/* Padding keeps the first and last token labels ("4:<eos>") inside the chart. */}
          <XAxis dataKey="pos" tick={{ fontSize: 10, fill: '#5b6478' }} interval={0} padding={{ left: 18, right: 24 }} />
          <YAxis domain={[0, 1]} tick={{ fontSize: 11, fill: '#5b6478' }} width={40} />
          <Tooltip isAnimationActive={false} formatter={(v) => (typeof v === 'number' ? v.toFixed(4) : String(v))} />
          {/* Its own legend: recharts' default labels each icon "<name> legend icon" in English. */}
          <Legend
            wrapperStyle={{ fontSize: 12 }}
            content={({ payload }) => (
              <ul className="policy-legend">
                {payload?.map((p) => (
                  <li key={String(p.value)}>
                    <span className="policy-swatch" style={{ background: p.color }} aria-hidden="true" />
                    {p.value}
                  </li>
                ))}
                {dropped > 0 ? (
                  <li key="rejected">
                    <span style={{ color: REJECTED }} aria-hidden="true">
                      {REJECTED_MARK}
                    </span>{' '}
                    {t('policies.rejectedLegend')}
                  </li>
                ) : null}
              </ul>
            )}
          />
          {/* π_rollout last and dashed: where it equals π_old (no top-k/top-p) it must not vanish under it. */}
          <Line dataKey="old" name={PI.piOld} stroke="#0072B2" strokeWidth={2} isAnimationActive={false} />
          <Line dataKey="next" name={PI.piNew} stroke="#009E73" strokeWidth={2} isAnimationActive={false} />
          <Line dataKey="rollout" name={PI.piRollout} stroke="#E69F00" strokeWidth={2} strokeDasharray="5 3" isAnimationActive={false} />
          {/* Tokens rejection sampling dropped: a mark on π_old (the ratio's denominator they were judged by), no line; its own legend row above. */}
          {dropped > 0 ? (
            <Line
              dataKey="rejectedAt"
              stroke="none"
              legendType="none"
              tooltipType="none"
              isAnimationActive={false}
              dot={(p: { cx?: number; cy?: number; index?: number; value?: number | null }) =>
                p.value !== null && p.value !== undefined && p.cx !== undefined && p.cy !== undefined ? (
                  <circle key={`rej-${p.index}`} cx={p.cx} cy={p.cy} r={5} fill={REJECTED} stroke="#fff" strokeWidth={1} data-testid="rejected-token" />
                ) : (
                  <g key={`none-${p.index}`} />
                )
              }
            />
          ) : null}
        </LineChart>
      </ResponsiveContainer>
      {dapo}
    </div>
  );
}
