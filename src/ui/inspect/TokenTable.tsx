// The token table of one response: the experience's per-token numbers, then one column group per
// update step the response was in, its policy, KL-loss and value columns each set off by a rule.
// What-if values follow the trained ones, in italics, where they differ. The token column stays in
// place while the table scrolls sideways; it can show the clipped tokens alone, and brings a
// requested token's clip badge into view.
import { type ReactNode, useEffect, useRef } from 'react';
import { useTranslation } from 'react-i18next';
import { t } from '../../i18n/index.ts';
import type { ClipSide, GroupRowStats, RecomputedTrace, TokenRow, TokenTable as Table, TokenUpdateCell } from '../../rl/inspect/index.ts';
import { differs, formatNumber, fullNumber } from './format.ts';
import type { ColumnKey } from './steps.ts';
import { klLabel, MATH, RATIO_TITLE, SYMBOL_LABELS } from './text.ts';
import { visibleToken } from '../../util/visibleToken.ts';

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
  /** Show only the tokens clipped in some update step. */
  onlyClipped: boolean;
  /** Bring this token's row, and its clip badge in update step `step`, into view (`n` counts requests). */
  reveal: { t: number; step?: number; n: number } | null;
  /** The frameworks' names of each column's tensor (steps.ts columnFrameworkNames). */
  names: Partial<Record<ColumnKey, string[]>>;
}

/** A token clipped in some update step of the iteration. */
export const isClippedRow = (r: TokenRow) => r.updates.some((u) => u.clipSide !== 'none');

/** Scrolls the table's box (and the page) so the cell is in view beside the sticky token column. */
function revealCell(wrap: HTMLElement, row: HTMLElement, cell: HTMLElement | null) {
  const sticky = row.querySelector<HTMLElement>('.sticky-col')?.offsetWidth ?? 0;
  if (cell) {
    const left = cell.offsetLeft - sticky - 16;
    const right = cell.offsetLeft + cell.offsetWidth + 16 - wrap.clientWidth;
    if (wrap.scrollLeft > left || wrap.scrollLeft < right) wrap.scrollLeft = Math.max(0, left);
  }
  const head = wrap.querySelector('thead')?.getBoundingClientRect().height ?? 0;
  const top = row.offsetTop - head - 8;
  if (wrap.scrollTop > top || wrap.scrollTop + wrap.clientHeight < row.offsetTop + row.offsetHeight) wrap.scrollTop = Math.max(0, top);
  wrap.scrollIntoView?.({ block: 'nearest' });
}

/** The first column of a sub-group inside an update step (KL loss, value loss) gets a rule before it. */
const SUB_START: ReadonlySet<ColumnKey> = new Set(['klLossT', 'vNew']);
const classOf = (col: ColumnKey, hl: ReadonlySet<ColumnKey>, base = '') =>
  [base, hl.has(col) ? 'hl' : '', SUB_START.has(col) ? 'sub-start' : ''].filter(Boolean).join(' ') || undefined;

function Num({ col, v, w, hl }: { col: ColumnKey; v: number | null; w?: number | null; hl: ReadonlySet<ColumnKey> }) {
  // Cells read the words with the plain t (one hook per cell would be thousands): TokenTable's hook re-renders them.
  const changed = w !== undefined && differs(v, w);
  return (
    <td className={classOf(col, hl, 'num')} data-col={col}>
      <span title={fullNumber(v)}>{formatNumber(v)}</span>
      {changed && (
        <span className="whatif-value" title={t('inspect:whatIf.valueTitle', { value: fullNumber(w) })}>
          → {formatNumber(w)}
        </span>
      )}
    </td>
  );
}

function ClipBadge({ side }: { side: ClipSide }) {
  return <span className={`clip-badge clip-${side}`}>{t(`inspect:clipBadge.${side}`)}</span>;
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
  const clippedText = (clipped: boolean | undefined) => (clipped ? t('inspect:table.clipped') : t('inspect:table.notClipped'));
  const sideChanged = w !== null && w.clipSide !== u.clipSide;
  const vClipChanged = w?.value && u.value && w.value.clipped !== u.value.clipped;
  return (
    <>
      <Num col="newLp" v={u.newLogprob} hl={hl} />
      <Num col="ratio" v={masked ? null : u.ratio} hl={hl} />
      <td className={classOf('clip', hl)} data-col="clip" data-step={u.step}>
        {!masked && <ClipBadge side={u.clipSide} />}
        {!masked && sideChanged && (
          <span className="whatif-value">
            → <ClipBadge side={w.clipSide} />
          </span>
        )}
      </td>
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
            {!masked && u.value && clippedText(u.value.clipped)}
            {!masked && vClipChanged && <span className="whatif-value">→ {clippedText(w?.value?.clipped)}</span>}
          </Cell>
        </>
      )}
    </>
  );
}

export function GroupPanel({ group, row, baseline }: { group: GroupRowStats; row: number; baseline: number | null }) {
  const { t: tr } = useTranslation('inspect');
  return (
    <section className="inspect-group" aria-label={tr('group.heading')}>
      <strong>{tr('group.heading')}</strong>
      <dl>
        <dt>{tr('group.scores')}</dt>
        <dd>
          {group.members.map((b, i) => (
            <span key={b} className={b === row ? 'group-self num' : 'num'} title={fullNumber(group.scores[i])}>
              {formatNumber(group.scores[i])}
              {b === row ? ` ${tr('group.thisOne')}` : ''}
            </span>
          ))}
        </dd>
        <dt>{tr('group.mean')}</dt>
        <dd className="num" title={fullNumber(group.mean)}>
          {formatNumber(group.mean)}
        </dd>
        <dt>{tr('group.std')}</dt>
        <dd className="num" title={fullNumber(group.std)}>
          {formatNumber(group.std)}
        </dd>
        <dt>{tr('group.transformed')}</dt>
        <dd className="num" title={fullNumber(group.transformedScore)}>
          {formatNumber(group.transformedScore)}
        </dd>
        {baseline !== null && (
          <>
            <dt>{tr('group.baseline')}</dt>
            <dd className="num" title={fullNumber(baseline)}>
              {formatNumber(baseline)}
            </dd>
          </>
        )}
      </dl>
    </section>
  );
}

export function TokenTable({ table, whatIf, rec, tokenText, selected, onSelect, highlight: hl, scanAt, onlyClipped, reveal, names }: TokenTableProps) {
  const { t: tr } = useTranslation('inspect');
  const wrap = useRef<HTMLElement>(null);
  const critic = table.group === null;
  const revealN = reveal?.n;
  // biome-ignore lint/correctness/useExhaustiveDependencies: each request (reveal.n) scrolls once, after the table drew its row
  useEffect(() => {
    const box = wrap.current;
    if (!box || !reveal) return;
    const tr = box.querySelector<HTMLElement>(`tbody tr[data-t="${reveal.t}"]`);
    if (!tr) return;
    revealCell(box, tr, reveal.step === undefined ? null : tr.querySelector<HTMLElement>(`[data-col="clip"][data-step="${reveal.step}"]`));
  }, [revealN]);
  const caption = tr('table.caption', { n: table.row + 1, estimator: table.advantageEstimator });
  const whitened = rec.whitening !== null;
  const updates = table.rows[0]?.updates ?? [];
  // The KL-loss column shows when the trained iteration or the what-if has the KL in the loss.
  const hasKlLoss = (tt: Table | null) => tt?.rows[0]?.updates[0]?.klLossTerm != null;
  const cols: UpdateColumns = { klLoss: hasKlLoss(table) || hasKlLoss(whatIf), critic };
  const baseCols = 10 + (critic ? 2 : 1);
  const updCols = 6 + (cols.klLoss ? 1 : 0) + (critic ? 5 : 0);
  const rowOf = (r: TokenRow, i: number) => {
    const w = whatIf?.rows[i] ?? null;
    const cls = [r.masked ? 'masked' : '', r.t === selected ? 'selected' : '', r.t === scanAt ? 'scan-at' : ''].filter(Boolean).join(' ');
    return (
      <tr key={r.t} className={cls || undefined} data-t={r.t}>
        <th scope="row" className={`sticky-col${hl.has('token') ? ' hl' : ''}`} data-col="token">
          <button
            type="button"
            className="token-btn"
            aria-label={tr('table.selectToken', { t: r.t, token: tokenText(r.t) })}
            aria-pressed={r.t === selected}
            onClick={() => onSelect(r.t)}
          >
            <span className="token-t">{r.t}</span>{' '}
            <span className="token-text" translate="no">
              {visibleToken(tokenText(r.t)) || '∅'}
            </span>
          </button>
          {r.scored && <span className="scored-mark">{tr('table.scored')}</span>}
        </th>
        <Cell col="mask" hl={hl}>
          {r.masked ? <span className="mask-badge">0 · {tr('table.masked')}</span> : '1'}
        </Cell>
        <Num col="rollout" v={r.rolloutLogprob} hl={hl} />
        <Num col="old" v={r.oldLogprob} hl={hl} />
        <Num col="ref" v={r.refLogprob} hl={hl} />
        <Num col="kl" v={r.kl} w={w?.kl} hl={hl} />
        <Num col="klPen" v={r.masked ? null : r.klReward} w={w && !r.masked ? w.klReward : undefined} hl={hl} />
        {!critic && <Num col="normScore" v={r.normScore} w={w ? w.normScore : undefined} hl={hl} />}
        {critic ? <Num col="reward" v={r.reward} w={w?.reward} hl={hl} /> : <Num col="reward" v={r.scanReward} w={w?.scanReward} hl={hl} />}
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
  const rows = table.rows.map((r, i) => ({ r, i })).filter(({ r }) => !onlyClipped || isClippedRow(r));
  const klHead = whatIf && whatIf.klEstimator !== table.klEstimator ? klLabel(`${table.klEstimator} → ${whatIf.klEstimator}`) : klLabel(table.klEstimator);
  const captionText = (
    <>
      {caption}
      {updates.length === 0 && <span className="muted"> — {tr('table.noUpdates')}</span>}
    </>
  );
  return (
    <>
      {/* Shown above the scrolling box, so it stays in view when the table scrolls sideways; the table keeps its own caption for assistive technology. */}
      <p className="inspect-table-caption" aria-hidden="true">
        {captionText}
      </p>
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must take focus so the keyboard can scroll it */}
      <section ref={wrap} className="inspect-table-wrap" aria-label={caption} tabIndex={0}>
        <table className="inspect-table">
          <caption className="visually-hidden">{captionText}</caption>
          <thead>
            <tr>
              <th scope="colgroup" colSpan={baseCols + 1} className="group-head sticky-head">
                {tr('table.experience')}
              </th>
              {updates.map((u) => (
                <th key={`${u.epoch}-${u.minibatch}`} scope="colgroup" colSpan={updCols} className="group-head">
                  {tr('table.updateGroup', { epoch: u.epoch + 1, minibatch: u.minibatch + 1 })}
                </th>
              ))}
            </tr>
            <tr>
              <th scope="col" className={`sticky-col${hl.has('token') ? ' hl' : ''}`} title={tr('columns.token.title')} data-col="token">
                t · {tr('columns.token.label')}
              </th>
              <Head hl={hl} col="mask" label={tr('columns.mask.label')} title={tr('columns.mask.title')} names={names.mask} />
              <SymbolHead hl={hl} col="rollout" names={names.rollout} />
              <SymbolHead hl={hl} col="old" names={names.old} />
              <SymbolHead hl={hl} col="ref" names={names.ref} />
              <Head hl={hl} col="kl" label={klHead} title={tr('columns.kl.title', MATH)} names={names.kl} />
              <SymbolHead hl={hl} col="klPen" />
              {!critic && <SymbolHead hl={hl} col="normScore" />}
              {critic ? (
                <SymbolHead hl={hl} col="reward" names={names.reward} />
              ) : (
                <Head hl={hl} col="reward" label={SYMBOL_LABELS.reward ?? 'r_t'} title={tr(table.klInScan ? 'columns.scanReward.title' : 'columns.scanRewardSummed.title', MATH)} />
              )}
              {critic && <SymbolHead hl={hl} col="value" names={names.value} />}
              {critic && <SymbolHead hl={hl} col="delta" />}
              <Head hl={hl} col="advRaw" label={tr(table.baseline === null ? 'columns.advRaw.label' : 'columns.advRawBaseline.label')} title={tr('columns.advRaw.title')} />
              <Head
                hl={hl}
                col="adv"
                label={tr(whitened ? 'columns.adv.label' : 'columns.advUnwhitened.label')}
                title={tr(whitened ? 'columns.adv.title' : 'columns.advUnwhitened.title')}
                names={names.adv}
              />
              <SymbolHead hl={hl} col="ret" names={names.ret} />
              {updates.map((u) => (
                <UpdateHeads key={`${u.epoch}-${u.minibatch}`} hl={hl} cols={cols} klLossEstimator={(whatIf && !hasKlLoss(table) ? whatIf : table).klLossEstimator} />
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map(({ r, i }) => rowOf(r, i))}
            {rows.length === 0 && (
              <tr>
                <td colSpan={baseCols + 1 + updates.length * updCols} className="muted">
                  {tr('table.noClipped')}
                </td>
              </tr>
            )}
          </tbody>
        </table>
      </section>
    </>
  );
}

/** A column head: its label, and under it the frameworks' names of the tensor it shows, if any. */
function Head({ col, label, title, hl, names }: { col: ColumnKey; label: string; title: string; hl: ReadonlySet<ColumnKey>; names?: string[] }) {
  return (
    <th scope="col" title={title} className={classOf(col, hl)} data-col={col}>
      {label}
      {names?.map((n) => (
        <code key={n} className="fw-name" translate="no">
          {n}
        </code>
      ))}
    </th>
  );
}

/** A column whose label is notation (the same in every language) and whose tooltip says what it is. */
function SymbolHead({ col, hl, names }: { col: ColumnKey; hl: ReadonlySet<ColumnKey>; names?: string[] }) {
  const { t: tr } = useTranslation('inspect');
  return <Head hl={hl} col={col} label={SYMBOL_LABELS[col] ?? col} title={tr(`columns.${col}.title`, MATH)} names={names} />;
}

function UpdateHeads({ hl, cols, klLossEstimator }: { hl: ReadonlySet<ColumnKey>; cols: UpdateColumns; klLossEstimator: string }) {
  const { t: tr } = useTranslation('inspect');
  return (
    <>
      <SymbolHead hl={hl} col="newLp" />
      <Head hl={hl} col="ratio" label={tr('columns.ratio.label')} title={RATIO_TITLE} />
      <Head hl={hl} col="clip" label={tr('columns.clip.label')} title={tr('columns.clip.title', MATH)} />
      <SymbolHead hl={hl} col="loss" />
      <SymbolHead hl={hl} col="aggW" />
      <SymbolHead hl={hl} col="grad" />
      {cols.klLoss && <Head hl={hl} col="klLossT" label={tr('columns.klLossT.label', { estimator: klLossEstimator })} title={tr('columns.klLossT.title', MATH)} />}
      {cols.critic && (
        <>
          <SymbolHead hl={hl} col="vNew" />
          <SymbolHead hl={hl} col="vUnclipped" />
          <SymbolHead hl={hl} col="vClipTerm" />
          <SymbolHead hl={hl} col="vLoss" />
          <Head hl={hl} col="vClipped" label={tr('columns.vClipped.label')} title={tr('columns.vClipped.title')} />
        </>
      )}
    </>
  );
}
