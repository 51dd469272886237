// The token table of one response: the experience's per-token numbers, then one column group per
// update step the response was in, its policy, KL-loss and value columns each set off by a rule.
// What-if values follow the trained ones, in italics, where they differ.
import type { ReactNode } from 'react';
import type { ClipSide, GroupRowStats, RecomputedTrace, TokenRow, TokenTable as Table, TokenUpdateCell } from '../../rl/inspect/index.ts';
import { differs, formatNumber, fullNumber } from './format.ts';
import type { ColumnKey } from './steps.ts';
import { INSPECT_TEXT } from './text.ts';

const C = INSPECT_TEXT.columns;

export interface TokenTableProps {
  table: Table;
  whatIf: Table | null;
  rec: RecomputedTrace;
  tokenText: (t: number) => string;
  selected: number;
  onSelect(t: number): void;
  highlight: ReadonlySet<ColumnKey>;
  /** The position the reverse scan is at, when the scan is shown. */
  scanAt: number | null;
}

/** The first column of a sub-group inside an update step (KL loss, value loss) gets a rule before it. */
const SUB_START: ReadonlySet<ColumnKey> = new Set(['klLossT', 'vNew']);
const classOf = (col: ColumnKey, hl: ReadonlySet<ColumnKey>, base = '') =>
  [base, hl.has(col) ? 'hl' : '', SUB_START.has(col) ? 'sub-start' : ''].filter(Boolean).join(' ') || undefined;

function Num({ col, v, w, hl }: { col: ColumnKey; v: number | null; w?: number | null; hl: ReadonlySet<ColumnKey> }) {
  const changed = w !== undefined && differs(v, w);
  return (
    <td className={classOf(col, hl, 'num')} data-col={col}>
      <span title={fullNumber(v)}>{formatNumber(v)}</span>
      {changed && (
        <span className="whatif-value" title={`${INSPECT_TEXT.whatIf.whatIf}: ${fullNumber(w)}`}>
          → {formatNumber(w)}
        </span>
      )}
    </td>
  );
}

function ClipBadge({ side }: { side: ClipSide }) {
  return <span className={`clip-badge clip-${side}`}>{INSPECT_TEXT.clipBadge[side]}</span>;
}

function Cell({ col, hl, children }: { col: ColumnKey; hl: ReadonlySet<ColumnKey>; children: ReactNode }) {
  return (
    <td className={classOf(col, hl)} data-col={col}>
      {children}
    </td>
  );
}

/** Which optional columns each update step has: the KL loss's when it is in the loss, the value loss's with a critic. */
interface UpdateColumns {
  klLoss: boolean;
  critic: boolean;
}

function UpdateCells({ u, w, masked, hl, cols }: { u: TokenUpdateCell; w: TokenUpdateCell | null; masked: boolean; hl: ReadonlySet<ColumnKey>; cols: UpdateColumns }) {
  const sideChanged = w !== null && w.clipSide !== u.clipSide;
  const vClipChanged = w?.value && u.value && w.value.clipped !== u.value.clipped;
  return (
    <>
      <Num col="newLp" v={u.newLogprob} hl={hl} />
      <Num col="ratio" v={masked ? null : u.ratio} hl={hl} />
      <Cell col="clip" hl={hl}>
        {!masked && <ClipBadge side={u.clipSide} />}
        {!masked && sideChanged && (
          <span className="whatif-value">
            → <ClipBadge side={w.clipSide} />
          </span>
        )}
      </Cell>
      <Num col="loss" v={masked ? null : u.tokenLoss} w={w && !masked ? w.tokenLoss : undefined} hl={hl} />
      <Num col="aggW" v={u.aggWeight} w={w ? w.aggWeight : undefined} hl={hl} />
      <Num col="grad" v={masked ? null : u.gradWeight} w={w && !masked ? w.gradWeight : undefined} hl={hl} />
      {cols.klLoss && <Num col="klLossT" v={masked ? null : u.klLossTerm} w={w && !masked ? w.klLossTerm : undefined} hl={hl} />}
      {cols.critic && (
        <>
          <Num col="vNew" v={u.value?.newValue ?? null} hl={hl} />
          <Num col="vUnclipped" v={masked ? null : (u.value?.unclipped ?? null)} w={w && !masked ? (w.value?.unclipped ?? null) : undefined} hl={hl} />
          <Num col="vClipTerm" v={masked ? null : (u.value?.clippedTerm ?? null)} w={w && !masked ? (w.value?.clippedTerm ?? null) : undefined} hl={hl} />
          <Num col="vLoss" v={masked ? null : (u.value?.loss ?? null)} w={w && !masked ? (w.value?.loss ?? null) : undefined} hl={hl} />
          <Cell col="vClipped" hl={hl}>
            {!masked && u.value && (u.value.clipped ? INSPECT_TEXT.table.clipped : INSPECT_TEXT.table.notClipped)}
            {!masked && vClipChanged && <span className="whatif-value">→ {w?.value?.clipped ? INSPECT_TEXT.table.clipped : INSPECT_TEXT.table.notClipped}</span>}
          </Cell>
        </>
      )}
    </>
  );
}

export function GroupPanel({ group, row }: { group: GroupRowStats; row: number }) {
  const G = INSPECT_TEXT.group;
  return (
    <section className="inspect-group" aria-label={G.heading}>
      <strong>{G.heading}</strong>
      <dl>
        <dt>{G.scores}</dt>
        <dd>
          {group.members.map((b, i) => (
            <span key={b} className={b === row ? 'group-self num' : 'num'} title={fullNumber(group.scores[i])}>
              {formatNumber(group.scores[i])}
              {b === row ? ` ${G.thisOne}` : ''}
            </span>
          ))}
        </dd>
        <dt>{G.mean}</dt>
        <dd className="num" title={fullNumber(group.mean)}>
          {formatNumber(group.mean)}
        </dd>
        <dt>{G.std}</dt>
        <dd className="num" title={fullNumber(group.std)}>
          {formatNumber(group.std)}
        </dd>
        <dt>{G.transformed}</dt>
        <dd className="num" title={fullNumber(group.transformedScore)}>
          {formatNumber(group.transformedScore)}
        </dd>
      </dl>
    </section>
  );
}

export function TokenTable({ table, whatIf, rec, tokenText, selected, onSelect, highlight: hl, scanAt }: TokenTableProps) {
  const critic = table.group === null;
  const whitened = rec.whitening !== null;
  const updates = table.rows[0]?.updates ?? [];
  // The KL-loss column shows when the trained iteration or the what-if has the KL in the loss.
  const hasKlLoss = (tt: Table | null) => tt?.rows[0]?.updates[0]?.klLossTerm != null;
  const cols: UpdateColumns = { klLoss: hasKlLoss(table) || hasKlLoss(whatIf), critic };
  const baseCols = 10 + (critic ? 2 : 0);
  const updCols = 6 + (cols.klLoss ? 1 : 0) + (critic ? 5 : 0);
  const rowOf = (r: TokenRow, i: number) => {
    const w = whatIf?.rows[i] ?? null;
    const cls = [r.masked ? 'masked' : '', r.t === selected ? 'selected' : '', r.t === scanAt ? 'scan-at' : ''].filter(Boolean).join(' ');
    return (
      <tr key={r.t} className={cls || undefined}>
        <th scope="row" className={`sticky-col${hl.has('token') ? ' hl' : ''}`} data-col="token">
          <button
            type="button"
            className="token-btn"
            aria-label={INSPECT_TEXT.table.selectToken(r.t, tokenText(r.t))}
            aria-pressed={r.t === selected}
            onClick={() => onSelect(r.t)}
          >
            <span className="token-t">{r.t}</span> <span className="token-text">{tokenText(r.t) || '∅'}</span>
          </button>
          {r.scored && <span className="scored-mark">{INSPECT_TEXT.table.scored}</span>}
        </th>
        <Cell col="mask" hl={hl}>
          {r.masked ? <span className="mask-badge">0 · {INSPECT_TEXT.table.masked}</span> : '1'}
        </Cell>
        <Num col="rollout" v={r.rolloutLogprob} hl={hl} />
        <Num col="old" v={r.oldLogprob} hl={hl} />
        <Num col="ref" v={r.refLogprob} hl={hl} />
        <Num col="kl" v={r.kl} w={w?.kl} hl={hl} />
        <Num col="klPen" v={r.masked ? null : r.klReward} w={w && !r.masked ? w.klReward : undefined} hl={hl} />
        <Num col="reward" v={r.reward} w={w?.reward} hl={hl} />
        {critic && <Num col="value" v={r.value} hl={hl} />}
        {critic && <Num col="delta" v={r.masked ? null : r.delta} w={w && !r.masked ? w.delta : undefined} hl={hl} />}
        <Num col="advRaw" v={r.advantageRaw} w={w?.advantageRaw} hl={hl} />
        <Num col="adv" v={r.advantage} w={w?.advantage} hl={hl} />
        <Num col="ret" v={r.return} w={w?.return} hl={hl} />
        {r.updates.map((u, j) => (
          <UpdateCells key={`${u.epoch}-${u.minibatch}`} u={u} w={w?.updates[j] ?? null} masked={r.masked} hl={hl} cols={cols} />
        ))}
      </tr>
    );
  };
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must take focus so the keyboard can scroll it
    <section className="inspect-table-wrap" aria-label={INSPECT_TEXT.table.caption(table.row, table.advantageEstimator)} tabIndex={0}>
      <table className="inspect-table">
        <caption>
          {INSPECT_TEXT.table.caption(table.row, table.advantageEstimator)}
          {updates.length === 0 && <span className="muted"> — {INSPECT_TEXT.table.noUpdates}</span>}
        </caption>
        <thead>
          <tr>
            <th scope="colgroup" colSpan={baseCols + 1} className="group-head sticky-head">
              {INSPECT_TEXT.table.experience}
            </th>
            {updates.map((u) => (
              <th key={`${u.epoch}-${u.minibatch}`} scope="colgroup" colSpan={updCols} className="group-head">
                {INSPECT_TEXT.table.updateGroup(u.epoch, u.minibatch)}
              </th>
            ))}
          </tr>
          <tr>
            <th scope="col" className={`sticky-col${hl.has('token') ? ' hl' : ''}`} title={C.token.title} data-col="token">
              {C.t.label} · {C.token.label}
            </th>
            <Head hl={hl} col="mask" {...C.mask} />
            <Head hl={hl} col="rollout" {...C.rollout} />
            <Head hl={hl} col="old" {...C.old} />
            <Head hl={hl} col="ref" {...C.ref} />
            <Head hl={hl} col="kl" label={C.kl.label(table.klEstimator)} title={C.kl.title} />
            <Head hl={hl} col="klPen" {...C.klPen} />
            <Head hl={hl} col="reward" {...C.reward} />
            {critic && <Head hl={hl} col="value" {...C.value} />}
            {critic && <Head hl={hl} col="delta" {...C.delta} />}
            <Head hl={hl} col="advRaw" {...C.advRaw} />
            <Head hl={hl} col="adv" {...(whitened ? C.adv : C.advUnwhitened)} />
            <Head hl={hl} col="ret" {...C.ret} />
            {updates.map((u) => (
              <UpdateHeads key={`${u.epoch}-${u.minibatch}`} hl={hl} cols={cols} klLossEstimator={(whatIf && !hasKlLoss(table) ? whatIf : table).klLossEstimator} />
            ))}
          </tr>
        </thead>
        <tbody>{table.rows.map(rowOf)}</tbody>
      </table>
    </section>
  );
}

function Head({ col, label, title, hl }: { col: ColumnKey; label: string; title: string; hl: ReadonlySet<ColumnKey> }) {
  return (
    <th scope="col" title={title} className={classOf(col, hl)} data-col={col}>
      {label}
    </th>
  );
}

function UpdateHeads({ hl, cols, klLossEstimator }: { hl: ReadonlySet<ColumnKey>; cols: UpdateColumns; klLossEstimator: string }) {
  return (
    <>
      <Head hl={hl} col="newLp" {...C.newLp} />
      <Head hl={hl} col="ratio" {...C.ratio} />
      <Head hl={hl} col="clip" {...C.clip} />
      <Head hl={hl} col="loss" {...C.loss} />
      <Head hl={hl} col="aggW" {...C.aggW} />
      <Head hl={hl} col="grad" {...C.grad} />
      {cols.klLoss && <Head hl={hl} col="klLossT" label={C.klLossT.label(klLossEstimator)} title={C.klLossT.title} />}
      {cols.critic && (
        <>
          <Head hl={hl} col="vNew" {...C.vNew} />
          <Head hl={hl} col="vUnclipped" {...C.vUnclipped} />
          <Head hl={hl} col="vClipTerm" {...C.vClipTerm} />
          <Head hl={hl} col="vLoss" {...C.vLoss} />
          <Head hl={hl} col="vClipped" {...C.vClipped} />
        </>
      )}
    </>
  );
}
