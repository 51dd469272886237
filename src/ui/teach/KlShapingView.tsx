// Teaching view "KL shaping": one sample's response as text, each token with the per-token reward
// −β·KL_t the batch gave it, the task score added at the last action token, and the return R_t
// those rewards make, drawn over the words. β is the batch's own; settings that differ from the
// run's are drawn beside it as a labelled what-if, recomputed with the float64 references.
import { useMemo, useState } from 'react';
import { findPreset, REWARD_HACKING } from '../../rl/presets.ts';
import { useApp } from '../../store/appStore.ts';
import { ViewHelp } from '../charts/ChartHelp.tsx';
import { loadPreset } from '../loadPreset.ts';
import { klBatchContext } from './klBatch.ts';
import { actualCells, barScale, estimatorScore, fmt, whatIfCells, whatIfProblem } from './klShaping.ts';
import { KlTokenStrip } from './KlTokenStrip.tsx';
import { SamplePicker } from './SamplePicker.tsx';

/** Responses this short (arithmetic's two digits and EOS) leave the penalty too few tokens to show. */
const SHORT_RESPONSE = 4;

function ShortResponseHint() {
  const loaded = useApp((s) => s.preset === REWARD_HACKING);
  const preset = findPreset(REWARD_HACKING);
  return (
    <p className="kl-hint small" data-testid="kl-short-hint">
      <span>These responses are only a few tokens long, too short to watch a per-token penalty add up.</span>
      {loaded ? (
        <span className="muted">“{REWARD_HACKING}” is loaded: Start (or Run both) trains it on 16-character sentences.</span>
      ) : preset ? (
        <button type="button" className="btn small" onClick={() => loadPreset(preset)}>
          Load “{REWARD_HACKING}” to see it over sentences
        </button>
      ) : null}
    </p>
  );
}

export function KlShapingView() {
  const samples = useApp((s) => s.samples);
  const run = useApp((s) => s.runs.find((r) => r.id === s.activeRunId));
  const settings = useApp((s) => s.config);
  const [index, setIndex] = useState(0);
  const row = samples?.rows[Math.min(index, (samples?.rows.length ?? 1) - 1)];
  const ctx = useMemo(() => klBatchContext(run, samples?.iter ?? -1, settings), [run, samples?.iter, settings]);
  const drawn = useMemo(() => {
    if (!row) return null;
    const actual = actualCells(row, ctx.batch.beta);
    const problem = ctx.whatIf ? whatIfProblem(row, ctx.batch.beta, ctx.setup) : null;
    const whatIf = ctx.whatIf && !problem ? whatIfCells(row, ctx.batch.beta, ctx.setup, ctx.whatIf.knobs) : null;
    return { actual, whatIf, problem, scale: barScale(actual, whatIf ?? []) };
  }, [row, ctx]);
  if (!samples || !row || !drawn) {
    return (
      <div className="empty-state" data-testid="view-kl">
        <strong>No samples yet</strong>After the first rollout this view shows how the KL penalty and the final score become per-token rewards.
      </div>
    );
  }
  const baselined = ctx.setup.advantageEstimator !== 'gae' ? estimatorScore(row, ctx.batch.beta, ctx.setup) : null;
  return (
    <div className="teach-view" data-testid="view-kl">
      <ViewHelp view="kl_shaping" title="KL shaping" />
      <div className="toolbar" style={{ marginBottom: 8 }}>
        <SamplePicker rewards={samples.rows.map((r) => r.reward)} index={index} onChange={setIndex} />
        <span className="muted small">
          r_t = −β·KL_t, plus the score at the last token; β = {fmt(ctx.batch.beta)} in this batch
          {ctx.klOutOfReward ? ' (the KL is not in this run’s reward, so β applied = 0)' : ''}
        </span>
      </div>
      {row.tokens.length <= SHORT_RESPONSE ? <ShortResponseHint /> : null}
      <p className="sample-prompt small">
        {row.prompt}
        <strong style={{ color: 'var(--text)' }}>{row.response}</strong>
      </p>
      <div className="kl-legend small muted" aria-hidden="true">
        <span>
          <i style={{ background: '#0072b2' }} />
          return R_t (above)
        </span>
        <span>
          <i style={{ background: '#d55e00' }} />
          −β·KL_t (below; amber where KL_t &lt; 0)
        </span>
        <span style={{ color: '#00734f', fontWeight: 600 }}>+score at the last token</span>
      </div>
      <div className="kl-strips">
        <KlTokenStrip cells={drawn.actual} scale={drawn.scale} label={`This batch (iteration ${samples.iter}, β = ${fmt(ctx.batch.beta)})`} testId="kl-actual" />
        {drawn.whatIf && ctx.whatIf ? (
          <KlTokenStrip
            cells={drawn.whatIf}
            scale={drawn.scale}
            label={`What if ${ctx.whatIf.label} (your settings): recomputed here, not what this batch trained with`}
            testId="kl-whatif"
            whatIf
          />
        ) : null}
      </div>
      {ctx.whatIf && drawn.problem ? (
        <p className="small muted" data-testid="kl-whatif-problem">
          What if {ctx.whatIf.label}: cannot recompute, {drawn.problem}.
        </p>
      ) : null}
      {baselined !== null ? (
        <p className="small muted">
          {ctx.setup.advantageEstimator} starts the returns from the score compared with the prompt’s other samples
          {fmt(baselined) === fmt(row.reward) ? `: ${fmt(baselined)} here, the same as the raw score.` : `: ${fmt(baselined)} here instead of ${fmt(row.reward)}.`}
        </p>
      ) : null}
    </div>
  );
}
