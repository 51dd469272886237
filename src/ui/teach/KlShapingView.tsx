// Teaching view "KL shaping": for one sample, the per-token shaped reward −β·KL_t, the terminal
// task score at the last action token, and the resulting returns and advantages.
import { useMemo, useState } from 'react';
import { Bar, CartesianGrid, ComposedChart, Legend, Line, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { useApp } from '../../store/appStore.ts';
import { SamplePicker } from './SamplePicker.tsx';

export function KlShapingView() {
  const samples = useApp((s) => s.samples);
  // β applied to the rewards: 0 when the KL is not in the reward (it may still be in the loss).
  const klInReward = useApp((s) => s.config.klInReward);
  const configBeta = useApp((s) => (s.config.klInReward ? s.config.klCoef : 0));
  // The β in force is the latest reported one (the adaptive controller moves it), else the config's.
  const reportedBeta = useApp((s) => {
    const run = s.runs.find((r) => r.id === s.activeRunId);
    const last = run?.metrics[run.metrics.length - 1];
    return last?.values.beta;
  });
  const beta = reportedBeta ?? configBeta;
  const [index, setIndex] = useState(0);
  const row = samples?.rows[Math.min(index, (samples?.rows.length ?? 1) - 1)];
  const data = useMemo(() => {
    if (!row) return [];
    const last = row.tokens.length - 1;
    return row.tokens.map((t, i) => ({
      pos: `${i}:${t.text}`,
      klPenalty: -beta * t.kl,
      score: i === last ? row.reward : 0,
      // Returns come from the trainer when it sends them; otherwise GAE's returns = A + V (pre-whitening A).
      ret: t.return ?? t.advantage + t.value,
      advantage: t.advantage,
    }));
  }, [row, beta]);
  if (!samples || !row) {
    return (
      <div className="empty-state" data-testid="view-kl">
        <strong>No samples yet</strong>After the first rollout this view shows how the KL penalty and the final score become per-token rewards.
      </div>
    );
  }
  return (
    <div className="teach-view" data-testid="view-kl">
      <div className="toolbar" style={{ marginBottom: 8 }}>
        <SamplePicker rewards={samples.rows.map((r) => r.reward)} index={index} onChange={setIndex} />
        <span className="muted small">
          r_t = −β·KL_t (+ score at the last token), β = {beta.toPrecision(3)}
          {klInReward ? '' : ' — the KL is not in the reward (β applied = 0)'}
        </span>
      </div>
      <p className="sample-prompt small">
        {row.prompt}
        <strong style={{ color: 'var(--text)' }}>{row.response}</strong>
      </p>
      <ResponsiveContainer width="100%" height={260}>
        <ComposedChart data={data} margin={{ top: 8, right: 12, bottom: 0, left: 0 }}>
          <CartesianGrid stroke="#eef0f5" vertical={false} />
          <XAxis dataKey="pos" tick={{ fontSize: 10, fill: '#5b6478' }} interval={0} />
          <YAxis tick={{ fontSize: 11, fill: '#5b6478' }} width={52} />
          <Tooltip isAnimationActive={false} formatter={(v) => (typeof v === 'number' ? v.toFixed(4) : String(v))} />
          <Legend wrapperStyle={{ fontSize: 12 }} />
          {/* Stacked: each token's bar is its reward r_t = −β·KL_t (+ the score at the last token). */}
          <Bar dataKey="klPenalty" name="−β·KL_t" fill="#D55E00" stackId="reward" isAnimationActive={false} />
          <Bar dataKey="score" name="terminal score" fill="#009E73" stackId="reward" isAnimationActive={false} />
          <Line dataKey="ret" name="return" stroke="#0072B2" strokeWidth={2} dot={false} isAnimationActive={false} />
          <Line dataKey="advantage" name="advantage" stroke="#CC79A7" strokeWidth={2} dot={false} isAnimationActive={false} />
        </ComposedChart>
      </ResponsiveContainer>
    </div>
  );
}
