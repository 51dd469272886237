// Teaching view "Clipping": the clipped surrogate objective against the ratio for A > 0 and A < 0,
// with ε_low / ε_high / dual-clip c marked and the latest update's token ratios as a histogram
// (clipped tokens in red: they contribute no gradient). The curves and the red count use the clip
// settings the batch was trained with; settings edited since only give a labelled what-if recount. Below, the modern family beside PPO with
// this minibatch's ratios: GSPO's objective in the sequence ratio (histogram of sequence ratios)
// and CISPO's gradient weight on log π against PPO's (histogram of token ratios). Then SAPO's soft
// gate or GMPO's geometric mean beside PPO's hard clip, for A > 0 and A < 0, with this minibatch's
// tokens on the curves; it follows the run's loss mode and the student can switch.
import { useEffect, useId, useMemo, useState } from 'react';
import { Trans, useTranslation } from 'react-i18next';
import { type ClippedCell, stepClippedCells } from '../../rl/inspect/index.ts';
import './clipLinks.css';
import { shownConfig, shownOwnBatch, useApp } from '../../store/appStore.ts';
import { type CapturedTrace, useInspection } from '../../store/inspection.ts';
import { ViewHelp } from '../charts/ChartHelp.tsx';
import { sameClip } from '../../store/batches.ts';
import { sapoTemperatures } from '../../reference/policyLoss.ts';
import {
  cispoGradWeight,
  clippedCount,
  formatClip,
  gmpoIsClipped,
  gmpoLogRatio,
  gmpoObjective,
  gspoObjective,
  isClipped,
  ppoGradWeight,
  ratioHistogram,
  sapoGradWeight,
  sapoObjective,
  surrogateObjective,
  type ClipParams,
  type SapoTemps,
} from './clipping.ts';

const W = 380;
const H = 220;
const PAD = { l: 40, r: 12, t: 14, b: 30 };
const BINS = 40;

// Formulas read the same in every language: they are passed into the sentences, never translated.
const RATIO = 'π_new / π_old';
const LOSS = 'max(−A·r, −A·clip(r, 1−ε_low, 1+ε_high))';
const DUAL_LOSS = 'min(L, −A·c)';
const SEQ_RATIO = 'exp(mean_t log π_new/π_old)';
const LOG_PI = 'log π';
// i18n-exempt: a formula, the same in every language
const CISPO_CURVE = 'CISPO clip(r)·A';
const SAPO_GATE = 'f(r) = σ(τ·(r − 1))·4/τ';
const SAPO_WEIGHT = '4σ(1 − σ)·r·A';
const GMPO_TERM = 'ℓ(r) = min(log r, ε_high) (A > 0), max(log r, −ε_low) (A < 0)';
const GMPO_ROW = 'Ā·exp(mean_t ℓ_t)';
const COMPARE_MODES = ['sapo', 'geo_mean'] as const;
type CompareMode = (typeof COMPARE_MODES)[number];
/** ℓ(r) is drawn no lower than this: log r runs to −∞ as r → 0. */
const ELL_FLOOR = -2;
/** At most this many token dots per panel (an even stride through the minibatch). */
const MAX_DOTS = 400;

const X_TICKS = [0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4, 5];

/** Under a panel: the x ticks up to xMax and the axis label; where zeroY is given, a "0" beside y = 0. */
function XAxisText({ xMax, sx, label, zeroY }: { xMax: number; sx: (x: number) => number; label: string; zeroY?: number }) {
  return (
    <>
      {X_TICKS.filter((v) => v <= xMax).map((v) => (
        <text key={v} x={sx(v)} y={H - 15} fontSize={10} textAnchor="middle" fill="#5b6478">
          {v}
        </text>
      ))}
      <text x={(W + PAD.l) / 2} y={H - 3} fontSize={10} textAnchor="middle" fill="#5b6478">
        {label}
      </text>
      {zeroY === undefined ? null : (
        <text x={10} y={zeroY + 3} fontSize={10} fill="#5b6478">
          0
        </text>
      )}
    </>
  );
}

/** At most this many clipped tokens are listed under a panel; the rest are a click on "more" away. */
const MAX_LINKS = 6;

/** The captured trace of the batch the view draws (its run and iteration), when one was captured. */
function useBatchTrace(): CapturedTrace | null {
  const runId = useApp((s) => s.batchRunId);
  const iter = useApp((s) => s.ratios?.iter);
  return useInspection((s) => s.traces.find((c) => c.runId === runId && c.trace.iter === iter) ?? null);
}

/** The clipped tokens of one sign under its panel, each a link to its row and clip badge in the inspector. */
function ClippedLinks({ sign, cells, captured }: { sign: 1 | -1; cells: readonly ClippedCell[]; captured: CapturedTrace }) {
  const { t } = useTranslation('teach');
  const focusOn = useInspection((s) => s.focusOn);
  const mine = cells.filter((c) => (sign > 0 ? c.advantage > 0 : c.advantage < 0));
  if (mine.length === 0) return null;
  const { A, iter } = captured.trace;
  const open = (c: ClippedCell) => focusOn({ runId: captured.runId, iter, row: c.row, t: c.t, step: c.step });
  return (
    <div className="clip-links" data-testid={`clip-links-${sign > 0 ? 'pos' : 'neg'}`}>
      <span className="muted small">{t('clipping.links.label')}</span>
      {mine.slice(0, MAX_LINKS).map((c) => {
        const text = captured.tokenText[c.row * A + c.t] ?? '';
        const side = t(`clipping.links.side.${c.side}`);
        return (
          <button
            key={`${c.row}-${c.t}`}
            type="button"
            className="btn small clip-link"
            aria-label={t('clipping.links.aria', { n: c.row + 1, t: c.t, text, side })}
            onClick={() => open(c)}
          >
            <span className={`clip-dot clip-${c.side}`} aria-hidden="true" />
            {t('clipping.links.token', { n: c.row + 1, t: c.t })} <span translate="no">“{text}”</span>
          </button>
        );
      })}
      {mine.length > MAX_LINKS ? (
        <button type="button" className="btn small ghost" onClick={() => open(mine[MAX_LINKS])}>
          {t('clipping.links.more', { count: mine.length - MAX_LINKS })}
        </button>
      ) : null}
    </div>
  );
}

/** `whatIf`: the current settings when the batch was trained with others (a recount, never the batch's own). */
function Panel({
  sign,
  p,
  whatIf,
  ratios,
  advs,
  xMax,
  links,
}: {
  sign: 1 | -1;
  p: ClipParams;
  whatIf: ClipParams | null;
  ratios: readonly number[];
  advs: readonly number[];
  xMax: number;
  links?: React.ReactNode;
}) {
  const { t } = useTranslation('teach');
  const adv = sign;
  const signText = sign > 0 ? '> 0' : '< 0';
  const xs = useMemo(() => Array.from({ length: 241 }, (_, i) => (xMax * i) / 240), [xMax]);
  const ys = xs.map((x) => surrogateObjective(x, adv, p));
  const yMin = Math.min(...ys, 0) - 0.2;
  const yMax = Math.max(...ys, 0) + 0.2;
  const sx = (x: number) => PAD.l + (x / xMax) * (W - PAD.l - PAD.r);
  const sy = (y: number) => PAD.t + ((yMax - y) / (yMax - yMin)) * (H - PAD.t - PAD.b);
  const hist = ratioHistogram(ratios, advs, sign, p, 0, xMax, BINS);
  const peak = Math.max(1, ...hist.map((b) => b.kept + b.clipped));
  const hScale = (n: number) => (n / peak) * (H - PAD.t - PAD.b) * 0.6;
  const base = H - PAD.b;
  const total = hist.reduce((s, b) => s + b.kept + b.clipped, 0);
  const clipped = hist.reduce((s, b) => s + b.clipped, 0);
  const path = xs.map((x, i) => `${i === 0 ? 'M' : 'L'}${sx(x).toFixed(1)},${sy(ys[i]).toFixed(1)}`).join(' ');
  const lo = 1 - p.clipLow;
  const hi = 1 + p.clipHigh;
  return (
    <figure className="clip-panel" aria-label={t('clipping.panel', { sign: signText })}>
      <figcaption>
        <strong>{sign > 0 ? 'A > 0' : 'A < 0'}</strong>{' '}
        <span className="muted small">{total > 0 ? t('clipping.counts', { total, clipped, pct: ((100 * clipped) / total).toFixed(1) }) : t('clipping.noTokens')}</span>
        {whatIf && total > 0 ? (
          <span className="muted small what-if" data-testid="clip-what-if">
            {' '}
            {t('clipping.whatIf', { clip: formatClip(whatIf), clipped: clippedCount(ratios, advs, sign, whatIf) })}
          </span>
        ) : null}
      </figcaption>
      <svg viewBox={`0 0 ${W} ${H}`} width="100%" role="img" aria-label={t('clipping.panelPlot', { sign: signText })}>
        {hist.map((b, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: histogram bins are a fixed positional sequence (bin i of BINS), never reordered
          <g key={i}>
            <rect x={sx(b.x0) + 0.5} width={Math.max(0, sx(b.x1) - sx(b.x0) - 1)} y={base - hScale(b.kept)} height={hScale(b.kept)} fill="#c7d2fe" />
            <rect x={sx(b.x0) + 0.5} width={Math.max(0, sx(b.x1) - sx(b.x0) - 1)} y={base - hScale(b.kept + b.clipped)} height={hScale(b.clipped)} fill="#f4a3a8" />
          </g>
        ))}
        <line x1={PAD.l} x2={W - PAD.r} y1={sy(0)} y2={sy(0)} stroke="#cfd5e3" />
        <line x1={PAD.l} x2={PAD.l} y1={PAD.t} y2={base} stroke="#cfd5e3" />
        {[lo, hi].map((x, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: the fixed pair [lower clip bound, upper clip bound], never reordered
          <g key={i}>
            <line x1={sx(x)} x2={sx(x)} y1={PAD.t} y2={base} stroke="#8a5a00" strokeDasharray="4 3" />
            <text x={sx(x) + (i === 0 ? -3 : 3)} y={PAD.t + 8} fontSize={10} textAnchor={i === 0 ? 'end' : 'start'} fill="#8a5a00">
              {i === 0 ? `1−ε_low` : `1+ε_high`}
            </text>
          </g>
        ))}
        {sign < 0 && p.dualClip !== null && p.dualClip <= xMax ? (
          <g>
            <line x1={sx(p.dualClip)} x2={sx(p.dualClip)} y1={PAD.t} y2={base} stroke="#b4232a" strokeDasharray="2 3" />
            <text x={sx(p.dualClip) - 3} y={PAD.t + 20} fontSize={10} textAnchor="end" fill="#b4232a">
              {t('clipping.dualClipMark', { c: p.dualClip })}
            </text>
          </g>
        ) : null}
        <path d={path} fill="none" stroke="#4f46e5" strokeWidth={2.2} />
        <XAxisText xMax={xMax} sx={sx} label={t('clipping.ratioAxis', { ratio: RATIO })} zeroY={sy(0)} />
      </svg>
      {links}
    </figure>
  );
}

interface Curve {
  label: string;
  color: string;
  dash?: string;
  f: (x: number) => number;
}

/** Each curve's line style beside its label, above a plot of several curves. */
function CurveLegend({ curves }: { curves: readonly Pick<Curve, 'label' | 'color' | 'dash'>[] }) {
  return (
    <span className="curve-legend">
      {curves.map((c) => (
        <span key={c.label} className="small">
          <svg width="22" height="8" aria-hidden="true">
            <line x1="1" x2="21" y1="4" y2="4" stroke={c.color} strokeWidth={2} strokeDasharray={c.dash} />
          </svg>
          {c.label}
        </span>
      ))}
    </span>
  );
}

/** A small plot of several curves against the ratio with a histogram of `values` under them. */
/** `histogramOf` names what the histogram counts; `count` says how many there are, in a sentence. */
function FamilyPanel({
  title,
  histogramOf,
  count,
  curves,
  values,
  xMax,
  xLabel,
}: {
  title: string;
  histogramOf: string;
  count: string;
  curves: Curve[];
  values: readonly number[];
  xMax: number;
  xLabel: string;
}) {
  const { t } = useTranslation('teach');
  const xs = useMemo(() => Array.from({ length: 241 }, (_, i) => (xMax * i) / 240), [xMax]);
  const ys = curves.map((c) => xs.map(c.f));
  const all = ys.flat();
  const yMin = Math.min(...all, 0) - 0.2;
  const yMax = Math.max(...all, 0) + 0.2;
  const sx = (x: number) => PAD.l + (x / xMax) * (W - PAD.l - PAD.r);
  const sy = (y: number) => PAD.t + ((yMax - y) / (yMax - yMin)) * (H - PAD.t - PAD.b);
  const counts = new Array<number>(BINS).fill(0);
  for (const v of values) if (Number.isFinite(v)) counts[Math.min(BINS - 1, Math.max(0, Math.floor((v / xMax) * BINS)))]++;
  const peak = Math.max(1, ...counts);
  const base = H - PAD.b;
  return (
    <figure className="clip-panel" aria-label={title}>
      <figcaption>
        <strong>{title}</strong> <span className="muted small">{values.length > 0 ? count : t('clipping.noUpdate')}</span>
        <CurveLegend curves={curves} />
      </figcaption>
      <svg
        viewBox={`0 0 ${W} ${H}`}
        width="100%"
        role="img"
        aria-label={t('clipping.familyPlot', { title, curves: curves.map((c) => c.label).join(t('listJoin')), axis: xLabel, histogramOf })}
      >
        {counts.map((n, i) => (
          <rect
            // biome-ignore lint/suspicious/noArrayIndexKey: histogram bins are a fixed positional sequence (bin i of BINS), never reordered
            key={i}
            x={sx((xMax * i) / BINS) + 0.5}
            width={Math.max(0, sx(xMax / BINS) - sx(0) - 1)}
            y={base - (n / peak) * (H - PAD.t - PAD.b) * 0.6}
            height={(n / peak) * (H - PAD.t - PAD.b) * 0.6}
            fill="#e2e8f0"
          />
        ))}
        <line x1={PAD.l} x2={W - PAD.r} y1={sy(0)} y2={sy(0)} stroke="#cfd5e3" />
        {curves.map((c, k) => (
          <path
            key={c.label}
            d={xs.map((x, i) => `${i === 0 ? 'M' : 'L'}${sx(x).toFixed(1)},${sy(ys[k][i]).toFixed(1)}`).join(' ')}
            fill="none"
            stroke={c.color}
            strokeWidth={2}
            strokeDasharray={c.dash}
          />
        ))}
        <XAxisText xMax={xMax} sx={sx} label={xLabel} />
      </svg>
    </figure>
  );
}

function FamilyPanels({ p, xMax }: { p: ClipParams; xMax: number }) {
  const ratios = useApp((s) => s.ratios);
  const lossMode = useApp((s) => s.config.lossMode);
  const { t } = useTranslation('teach');
  const seqRatios = ratios?.seqRatios ?? [];
  const tokenRatios = ratios?.ratios ?? [];
  return (
    <>
      <p className="muted small">
        <Trans t={t} i18nKey="clipping.modern" values={{ loss: lossMode, seqRatio: SEQ_RATIO, logPi: LOG_PI }} components={{ b: <strong /> }} />
      </p>
      <div className="clip-panels" data-testid="clip-family">
        <FamilyPanel
          title={t('clipping.gspo.title')}
          histogramOf={t('clipping.gspo.histogramOf')}
          count={t('clipping.gspo.count', { n: seqRatios.length })}
          xLabel={t('clipping.gspo.axis')}
          xMax={xMax}
          values={seqRatios}
          curves={[
            { label: 'A = +1', color: '#4f46e5', f: (x) => gspoObjective(x, 1, p) },
            { label: 'A = −1', color: '#b4232a', f: (x) => gspoObjective(x, -1, p) },
          ]}
        />
        <FamilyPanel
          title={t('clipping.cispo.title', { logPi: LOG_PI })}
          histogramOf={t('clipping.cispo.histogramOf')}
          count={t('clipping.cispo.count', { n: tokenRatios.length })}
          xLabel={t('clipping.ratioAxis', { ratio: RATIO })}
          xMax={xMax}
          values={tokenRatios}
          curves={[
            { label: t('clipping.cispo.ppoCurve'), color: '#4f46e5', f: (x) => ppoGradWeight(x, 1, p) },
            { label: CISPO_CURVE, color: '#0f766e', dash: '5 3', f: (x) => cispoGradWeight(x, 1, p) },
          ]}
        />
      </div>
    </>
  );
}

/**
 * One sign's panel comparing PPO with SAPO or GMPO: the curves for unit advantage of that sign
 * and this minibatch's tokens of that sign as dots on SAPO's gradient weight (red where PPO clips
 * them to no gradient) or on GMPO's ℓ(r) (red where ℓ is clipped flat), over their histogram.
 */
function ComparePanel({
  sign,
  mode,
  p,
  temps,
  ratios,
  advs,
  xMax,
}: {
  sign: 1 | -1;
  mode: CompareMode;
  p: ClipParams;
  temps: SapoTemps;
  ratios: readonly number[];
  advs: readonly number[];
  xMax: number;
}) {
  const { t } = useTranslation('teach');
  const signText = sign > 0 ? '> 0' : '< 0';
  const curves: Curve[] =
    mode === 'sapo'
      ? [
          { label: t('clipping.compare.ppoObjective'), color: '#4f46e5', f: (x) => surrogateObjective(x, sign, p) },
          { label: t('clipping.compare.ppoWeight'), color: '#4f46e5', dash: '2 3', f: (x) => ppoGradWeight(x, sign, p) },
          { label: t('clipping.compare.sapoObjective'), color: '#0f766e', f: (x) => sapoObjective(x, sign, temps) },
          { label: t('clipping.compare.sapoWeight'), color: '#0f766e', dash: '6 3', f: (x) => sapoGradWeight(x, sign, temps) },
        ]
      : [
          { label: t('clipping.compare.ppoObjective'), color: '#4f46e5', f: (x) => surrogateObjective(x, sign, p) },
          { label: t('clipping.compare.gmpoObjective'), color: '#0f766e', f: (x) => gmpoObjective(x, sign, p) },
          { label: t('clipping.compare.gmpoTerm'), color: '#c2410c', dash: '6 3', f: (x) => Math.max(ELL_FLOOR, gmpoLogRatio(x, sign, p)) },
        ];
  // The tokens sit on SAPO's gradient weight or GMPO's ℓ(r), the last curve drawn.
  const onCurve = curves[curves.length - 1].f;
  const xs = useMemo(() => Array.from({ length: 241 }, (_, i) => (xMax * (i + 0.5)) / 241), [xMax]);
  const ys = curves.map((c) => xs.map(c.f));
  const all = ys.flat();
  const yMin = Math.min(...all, 0) - 0.2;
  const yMax = Math.max(...all, 0) + 0.2;
  const sx = (x: number) => PAD.l + (Math.min(x, xMax) / xMax) * (W - PAD.l - PAD.r);
  const sy = (y: number) => PAD.t + ((yMax - y) / (yMax - yMin)) * (H - PAD.t - PAD.b);
  const base = H - PAD.b;
  const mine: { r: number; a: number }[] = [];
  for (let i = 0; i < ratios.length; i++) if (Number.isFinite(ratios[i]) && ratios[i] > 0 && (sign > 0 ? advs[i] > 0 : advs[i] < 0)) mine.push({ r: ratios[i], a: advs[i] });
  const flat = (r: number, a: number) => (mode === 'sapo' ? isClipped(r, a, p) : gmpoIsClipped(r, a, p));
  const nFlat = mine.filter((k) => flat(k.r, k.a)).length;
  // SAPO's factor on r·A at the tokens PPO drops: how much push they keep.
  const kept = mine.filter((k) => isClipped(k.r, k.a, p));
  const meanFactor = kept.length > 0 ? kept.reduce((s, k) => s + sapoGradWeight(k.r, k.a, temps) / (k.r * k.a), 0) / kept.length : 0;
  const counts = new Array<number>(BINS).fill(0);
  for (const k of mine) counts[Math.min(BINS - 1, Math.floor((k.r / xMax) * BINS))]++;
  const peak = Math.max(1, ...counts);
  const stride = Math.max(1, Math.ceil(mine.length / MAX_DOTS));
  const dots = mine.filter((_, i) => i % stride === 0);
  // Whole-number values on the y axis (every other one when the range is tall), 0 drawn apart.
  const yStep = yMax - yMin > 6 ? 2 : 1;
  const yTicks: number[] = [];
  for (let v = Math.ceil(yMin / yStep) * yStep; v <= yMax; v += yStep) if (v !== 0) yTicks.push(v);
  const marks =
    mode === 'sapo'
      ? [{ x: 1, label: 'r = 1' }]
      : [
          { x: Math.exp(-p.clipLow), label: 'e^−ε_low' },
          { x: Math.exp(p.clipHigh), label: 'e^ε_high' },
        ];
  const title = t(mode === 'sapo' ? 'clipping.compare.sapo.panel' : 'clipping.compare.gmpo.panel', { sign: signText });
  const count =
    mine.length === 0
      ? t('clipping.noTokens')
      : mode === 'sapo'
        ? nFlat === 0
          ? t('clipping.compare.sapo.countsNoneClipped', { total: mine.length })
          : t('clipping.compare.sapo.counts', { total: mine.length, clipped: nFlat, factor: meanFactor.toFixed(2) })
        : t('clipping.compare.gmpo.counts', { total: mine.length, clipped: nFlat, pct: ((100 * nFlat) / mine.length).toFixed(1) });
  return (
    <figure className="clip-panel" aria-label={title}>
      <figcaption>
        <strong>{sign > 0 ? 'A > 0' : 'A < 0'}</strong> <span className="muted small">{count}</span>
        <CurveLegend curves={curves} />
      </figcaption>
      <svg
        viewBox={`0 0 ${W} ${H}`}
        width="100%"
        role="img"
        aria-label={t('clipping.compare.plot', { title, curves: curves.map((c) => c.label).join(t('listJoin')), n: mine.length, clipped: nFlat })}
      >
        {counts.map((n, i) => (
          <rect
            // biome-ignore lint/suspicious/noArrayIndexKey: histogram bins are a fixed positional sequence (bin i of BINS), never reordered
            key={i}
            x={sx((xMax * i) / BINS) + 0.5}
            width={Math.max(0, sx(xMax / BINS) - sx(0) - 1)}
            y={base - (n / peak) * (H - PAD.t - PAD.b) * 0.4}
            height={(n / peak) * (H - PAD.t - PAD.b) * 0.4}
            fill="#e2e8f0"
          />
        ))}
        <line x1={PAD.l} x2={W - PAD.r} y1={sy(0)} y2={sy(0)} stroke="#cfd5e3" />
        <line x1={PAD.l} x2={PAD.l} y1={PAD.t} y2={base} stroke="#cfd5e3" />
        {marks.map((m, i) => (
          <g key={m.label}>
            <line x1={sx(m.x)} x2={sx(m.x)} y1={PAD.t} y2={base} stroke="#8a5a00" strokeDasharray="4 3" />
            <text x={sx(m.x) + (i === 0 && marks.length > 1 ? -3 : 3)} y={PAD.t + 8} fontSize={10} textAnchor={i === 0 && marks.length > 1 ? 'end' : 'start'} fill="#8a5a00">
              {m.label}
            </text>
          </g>
        ))}
        {yTicks.map((v) => (
          <text key={v} x={PAD.l - 4} y={sy(v) + 3} fontSize={10} textAnchor="end" fill="#5b6478">
            {v}
          </text>
        ))}
        {curves.map((c, k) => (
          <path
            key={c.label}
            d={xs.map((x, i) => `${i === 0 ? 'M' : 'L'}${sx(x).toFixed(1)},${sy(ys[k][i]).toFixed(1)}`).join(' ')}
            fill="none"
            stroke={c.color}
            // PPO's objective first and wide, so it shows as a band where another curve runs on it
            strokeWidth={k === 0 ? 4 : 2}
            strokeOpacity={k === 0 ? 0.5 : 1}
            strokeDasharray={c.dash}
          />
        ))}
        <g data-testid="compare-dots">
          {dots.map((k, i) => (
            <circle
              // biome-ignore lint/suspicious/noArrayIndexKey: the minibatch's tokens in their fixed order, never reordered
              key={i}
              cx={sx(k.r)}
              cy={sy(onCurve(Math.min(k.r, xMax)))}
              r={2.2}
              fill={flat(k.r, k.a) ? '#b4232a' : '#0f766e'}
              fillOpacity={0.55}
            />
          ))}
        </g>
        <XAxisText xMax={xMax} sx={sx} label={t('clipping.ratioAxis', { ratio: RATIO })} zeroY={sy(0)} />
      </svg>
    </figure>
  );
}

/** SAPO or GMPO beside PPO: follows the shown run's loss mode until the student picks one. */
function ComparePanels({ p, xMax }: { p: ClipParams; xMax: number }) {
  const { t } = useTranslation('teach');
  const ratios = useApp((s) => s.ratios);
  const runConfig = useApp(shownConfig);
  const [picked, setPicked] = useState<CompareMode | null>(null);
  const group = useId();
  const runMode = runConfig.lossMode;
  const mode: CompareMode = picked ?? (runMode === 'geo_mean' ? 'geo_mean' : 'sapo');
  const tau = sapoTemperatures(runConfig);
  const temps: SapoTemps = { tauPos: tau.sapoTauPos, tauNeg: tau.sapoTauNeg };
  const tokenRatios = ratios?.ratios ?? [];
  const tokenAdvs = ratios?.advantages ?? [];
  return (
    <section className="clip-compare" aria-labelledby={`${group}-title`} data-testid="clip-compare">
      <h3 id={`${group}-title`} className="small">
        {t('clipping.compare.title')}
      </h3>
      <div className="segmented" role="radiogroup" aria-label={t('clipping.compare.pick')}>
        {COMPARE_MODES.map((m) => (
          <label key={m} className={`btn small${mode === m ? ' selected' : ''}`}>
            <input type="radio" name={group} value={m} checked={mode === m} onChange={() => setPicked(m)} />
            {t(m === 'sapo' ? 'clipping.compare.sapo.name' : 'clipping.compare.gmpo.name')}
          </label>
        ))}
      </div>
      <span className="muted small compare-follows" data-testid="clip-compare-follows">
        {/* "following" only where the run's mode is one of the two drawn here */}
        {t(picked === null && (COMPARE_MODES as readonly string[]).includes(runMode) ? 'clipping.compare.follows' : 'clipping.compare.picked', { loss: runMode })}
      </span>
      <p className="muted small">
        {mode === 'sapo'
          ? t('clipping.compare.sapo.explain', { gate: SAPO_GATE, weight: SAPO_WEIGHT, tauPos: temps.tauPos, tauNeg: temps.tauNeg })
          : t('clipping.compare.gmpo.explain', { term: GMPO_TERM, row: GMPO_ROW })}
      </p>
      <div className="clip-panels">
        <ComparePanel sign={1} mode={mode} p={p} temps={temps} ratios={tokenRatios} advs={tokenAdvs} xMax={xMax} />
        <ComparePanel sign={-1} mode={mode} p={p} temps={temps} ratios={tokenRatios} advs={tokenAdvs} xMax={xMax} />
      </div>
    </section>
  );
}

export function ClippingView() {
  const { t } = useTranslation('teach');
  const config = useApp((s) => s.config);
  const ratios = useApp((s) => s.ratios);
  // The settings panel trains playground runs: an own-model batch has no what-if from it.
  const ownModel = useApp((s) => shownOwnBatch(s) !== undefined);
  const current: ClipParams = { clipLow: config.clipLow, clipHigh: config.clipHigh, dualClip: config.dualClip };
  // A batch is drawn and counted with the settings it was trained with; the current ones differ only as a what-if.
  const p: ClipParams = ratios?.clip ?? current;
  const whatIf = ratios && !ownModel && !sameClip(ratios.clip, current) ? current : null;
  const xMax = Math.min(5, Math.max(2, 1 + p.clipHigh + 0.6, (p.dualClip ?? 0) + 0.5));
  // While this view is open every iteration is captured, so its clipped tokens lead into the inspector.
  const setCapture = useInspection((s) => s.setCapture);
  useEffect(() => {
    setCapture(true);
    return () => setCapture(false);
  }, [setCapture]);
  const captured = useBatchTrace();
  const cells = useMemo(() => (captured ? stepClippedCells(captured.trace, captured.trace.minibatches.length - 1) : []), [captured]);
  const links = (sign: 1 | -1) => (captured ? <ClippedLinks sign={sign} cells={cells} captured={captured} /> : null);
  return (
    <div className="teach-view" data-testid="view-clipping">
      <ViewHelp view="clipping" title={t('clipping.help')} />
      <p className="muted small">{t('clipping.intro', { loss: LOSS, dualLoss: DUAL_LOSS })}</p>
      <div className="clip-panels">
        <Panel sign={1} p={p} whatIf={whatIf} ratios={ratios?.ratios ?? []} advs={ratios?.advantages ?? []} xMax={xMax} links={links(1)} />
        <Panel sign={-1} p={p} whatIf={whatIf} ratios={ratios?.ratios ?? []} advs={ratios?.advantages ?? []} xMax={xMax} links={links(-1)} />
      </div>
      {ratios && !captured ? (
        <p className="muted small" data-testid="clip-links-none">
          {t('clipping.links.noTrace')}
        </p>
      ) : null}
      <FamilyPanels p={p} xMax={xMax} />
      <ComparePanels p={p} xMax={xMax} />
      {ratios ? (
        <p className="muted small" data-testid="clip-trained">
          {t('clipping.trained', { iter: ratios.iter, clip: formatClip(ratios.clip) })}
          {whatIf ? t('clipping.trainedWhatIf', { clip: formatClip(whatIf) }) : null}
        </p>
      ) : (
        <div className="empty-state">
          <strong>{t('clipping.emptyTitle')}</strong>
          {t('clipping.emptyBody')}
        </div>
      )}
    </div>
  );
}
