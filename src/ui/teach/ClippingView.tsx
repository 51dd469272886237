// Teaching view "Clipping": the clipped surrogate objective against the ratio for A > 0 and A < 0,
// with ε_low / ε_high / dual-clip c marked and the latest update's token ratios as a histogram
// (clipped tokens in red: they contribute no gradient). The curves and the red count use the clip
// settings the batch was trained with; settings edited since only give a labelled what-if recount. Below, the modern family beside PPO with
// this minibatch's ratios: GSPO's objective in the sequence ratio (histogram of sequence ratios)
// and CISPO's gradient weight on log π against PPO's (histogram of token ratios).
import { useMemo } from 'react';
import { useApp } from '../../store/appStore.ts';
import { ViewHelp } from '../charts/ChartHelp.tsx';
import { sameClip } from '../../store/batches.ts';
import { cispoGradWeight, clippedCount, formatClip, gspoObjective, ppoGradWeight, ratioHistogram, surrogateObjective, type ClipParams } from './clipping.ts';

const W = 380;
const H = 220;
const PAD = { l: 40, r: 12, t: 14, b: 30 };
const BINS = 40;

/** `whatIf`: the current settings when the batch was trained with others (a recount, never the batch's own). */
function Panel({
  sign,
  p,
  whatIf,
  ratios,
  advs,
  xMax,
}: {
  sign: 1 | -1;
  p: ClipParams;
  whatIf: ClipParams | null;
  ratios: readonly number[];
  advs: readonly number[];
  xMax: number;
}) {
  const adv = sign;
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
  const ticks = [0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4, 5].filter((t) => t <= xMax);
  return (
    <figure className="clip-panel" aria-label={`Clipped objective for A ${sign > 0 ? '> 0' : '< 0'}`}>
      <figcaption>
        <strong>{sign > 0 ? 'A > 0' : 'A < 0'}</strong>{' '}
        <span className="muted small">{total > 0 ? `${total} tokens, ${clipped} clipped (${((100 * clipped) / total).toFixed(1)}%)` : 'no tokens yet'}</span>
        {whatIf && total > 0 ? (
          <span className="muted small what-if" data-testid="clip-what-if">
            {' '}
            · what if {formatClip(whatIf)}: {clippedCount(ratios, advs, sign, whatIf)} clipped
          </span>
        ) : null}
      </figcaption>
      <svg
        viewBox={`0 0 ${W} ${H}`}
        width="100%"
        role="img"
        aria-label={`Clipped objective for A ${sign > 0 ? '> 0' : '< 0'} against the ratio, over a histogram of the last update's token ratios`}
      >
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
              dual clip c = {p.dualClip}
            </text>
          </g>
        ) : null}
        <path d={path} fill="none" stroke="#4f46e5" strokeWidth={2.2} />
        {ticks.map((t) => (
          <text key={t} x={sx(t)} y={H - 15} fontSize={10} textAnchor="middle" fill="#5b6478">
            {t}
          </text>
        ))}
        <text x={(W + PAD.l) / 2} y={H - 3} fontSize={10} textAnchor="middle" fill="#5b6478">
          ratio r = π_new / π_old
        </text>
        <text x={10} y={sy(0) + 3} fontSize={10} fill="#5b6478">
          0
        </text>
      </svg>
    </figure>
  );
}

interface Curve {
  label: string;
  color: string;
  dash?: string;
  f: (x: number) => number;
}

/** A small plot of several curves against the ratio with a histogram of `values` under them. */
function FamilyPanel({ title, note, curves, values, xMax, xLabel }: { title: string; note: string; curves: Curve[]; values: readonly number[]; xMax: number; xLabel: string }) {
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
  const ticks = [0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4, 5].filter((t) => t <= xMax);
  return (
    <figure className="clip-panel" aria-label={title}>
      <figcaption>
        <strong>{title}</strong> <span className="muted small">{values.length > 0 ? `${values.length} ${note}` : 'no update yet'}</span>
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
      </figcaption>
      <svg viewBox={`0 0 ${W} ${H}`} width="100%" role="img" aria-label={`${title}: ${curves.map((c) => c.label).join(', ')} against ${xLabel}, over a histogram of ${note}`}>
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
        {ticks.map((t) => (
          <text key={t} x={sx(t)} y={H - 15} fontSize={10} textAnchor="middle" fill="#5b6478">
            {t}
          </text>
        ))}
        <text x={(W + PAD.l) / 2} y={H - 3} fontSize={10} textAnchor="middle" fill="#5b6478">
          {xLabel}
        </text>
      </svg>
    </figure>
  );
}

function FamilyPanels({ p, xMax }: { p: ClipParams; xMax: number }) {
  const ratios = useApp((s) => s.ratios);
  const lossMode = useApp((s) => s.config.lossMode);
  return (
    <>
      <p className="muted small">
        The modern family (your policy loss: <strong>{lossMode}</strong>). GSPO clips one length-normalised ratio per response, s = exp(mean_t log π_new/π_old), so a whole response
        is kept or dropped. CISPO never drops a token: its gradient weight on log π is the clipped ratio times A, where PPO’s weight r·A falls to 0 once the token is clipped.
      </p>
      <div className="clip-panels" data-testid="clip-family">
        <FamilyPanel
          title="GSPO: objective in the sequence ratio"
          note="responses in the last minibatch"
          xLabel="sequence ratio s"
          xMax={xMax}
          values={ratios?.seqRatios ?? []}
          curves={[
            { label: 'A = +1', color: '#4f46e5', f: (x) => gspoObjective(x, 1, p) },
            { label: 'A = −1', color: '#b4232a', f: (x) => gspoObjective(x, -1, p) },
          ]}
        />
        <FamilyPanel
          title="CISPO vs PPO: gradient weight on log π (A = +1)"
          note="tokens in the last minibatch"
          xLabel="ratio r = π_new / π_old"
          xMax={xMax}
          values={ratios?.ratios ?? []}
          curves={[
            { label: 'PPO r·A (0 when clipped)', color: '#4f46e5', f: (x) => ppoGradWeight(x, 1, p) },
            { label: 'CISPO clip(r)·A', color: '#0f766e', dash: '5 3', f: (x) => cispoGradWeight(x, 1, p) },
          ]}
        />
      </div>
    </>
  );
}

export function ClippingView() {
  const config = useApp((s) => s.config);
  const ratios = useApp((s) => s.ratios);
  const current: ClipParams = { clipLow: config.clipLow, clipHigh: config.clipHigh, dualClip: config.dualClip };
  // A batch is drawn and counted with the settings it was trained with; the current ones differ only as a what-if.
  const p: ClipParams = ratios?.clip ?? current;
  const whatIf = ratios && !sameClip(ratios.clip, current) ? current : null;
  const xMax = Math.min(5, Math.max(2, 1 + p.clipHigh + 0.6, (p.dualClip ?? 0) + 0.5));
  return (
    <div className="teach-view" data-testid="view-clipping">
      <ViewHelp view="clipping" title="PPO clipping" />
      <p className="muted small">
        Objective −L with L = max(−A·r, −A·clip(r, 1−ε_low, 1+ε_high)) and, for A &lt; 0, dual clip min(L, −A·c). Flat parts of the curve give no gradient: once a token’s ratio
        leaves the trust region in the direction its advantage pushes, PPO stops pushing.
      </p>
      <div className="clip-panels">
        <Panel sign={1} p={p} whatIf={whatIf} ratios={ratios?.ratios ?? []} advs={ratios?.advantages ?? []} xMax={xMax} />
        <Panel sign={-1} p={p} whatIf={whatIf} ratios={ratios?.ratios ?? []} advs={ratios?.advantages ?? []} xMax={xMax} />
      </div>
      <FamilyPanels p={p} xMax={xMax} />
      {ratios ? (
        <p className="muted small" data-testid="clip-trained">
          Histogram: ratios of iteration {ratios.iter}, trained with {formatClip(ratios.clip)} — blue kept, red clipped.
          {whatIf ? ` Your settings now (${formatClip(whatIf)}) are not what this batch was trained with: “what if” recounts it with them.` : null}
        </p>
      ) : (
        <div className="empty-state">
          <strong>No ratios yet</strong>The curves show the objective for your current ε; the token histogram appears after the first PPO update.
        </div>
      )}
    </div>
  );
}
