// The responses of the inspected batch as a listbox: prompt, response text, its clipped tokens by
// side and score; ↑ / ↓, Home and End move the selection (the active option is announced through
// aria-activedescendant). "Next clipped token" jumps to the next clipped token of the batch.
import { type KeyboardEvent, type ReactNode, useEffect, useId, useRef } from 'react';
import { useTranslation } from 'react-i18next';
import type { ClipCounts } from '../../rl/inspect/index.ts';
import { formatNumber, fullNumber } from './format.ts';

export interface ResponseItem {
  prompt: string;
  response: string;
  score: number;
  length: number;
  /** Clip badges of the response's tokens over the update steps, by side. */
  clipped: ClipCounts;
}

const SIDES = ['low', 'high', 'dual'] as const;

/** A response's clipped-token counts as small badges, one per side that has any. */
function ClipCountBadges({ counts }: { counts: ClipCounts }) {
  const { t: tr } = useTranslation('inspect');
  const total = counts.low + counts.high + counts.dual;
  if (total === 0) return <span className="resp-clips muted">{tr('picker.noneClipped')}</span>;
  return (
    <span className="resp-clips" title={tr('picker.clippedTitle')}>
      {SIDES.filter((s) => counts[s] > 0).map((s) => (
        <span key={s} className={`clip-badge clip-${s}`}>
          {tr(`picker.clipped.${s}`, { count: counts[s] })}
        </span>
      ))}
    </span>
  );
}

export function ResponsePicker({ items, row, onRow, actions }: { items: ResponseItem[]; row: number; onRow(r: number): void; actions?: ReactNode }) {
  const id = useId();
  const list = useRef<HTMLDivElement>(null);
  const { t: tr } = useTranslation('inspect');
  useEffect(() => {
    list.current?.querySelector(`[data-row="${row}"]`)?.scrollIntoView?.({ block: 'nearest' });
  }, [row]);
  const onKey = (e: KeyboardEvent) => {
    const n = items.length;
    const to = e.key === 'ArrowDown' ? row + 1 : e.key === 'ArrowUp' ? row - 1 : e.key === 'Home' ? 0 : e.key === 'End' ? n - 1 : null;
    if (to === null) return;
    e.preventDefault();
    onRow(Math.max(0, Math.min(n - 1, to)));
  };
  return (
    <div className="response-picker">
      <div className="picker-head">
        <span id={`${id}-label`} className="picker-label">
          {tr('picker.responses')} <span className="muted small">{tr('picker.responsesHint')}</span>
        </span>
        {actions}
      </div>
      <div ref={list} role="listbox" tabIndex={0} aria-labelledby={`${id}-label`} aria-activedescendant={`${id}-opt-${row}`} onKeyDown={onKey} className="response-list">
        {items.map((it, b) => (
          // biome-ignore lint/a11y/useKeyWithClickEvents lint/a11y/useFocusableInteractive lint/suspicious/noArrayIndexKey: the listbox holds focus and handles the keys (aria-activedescendant); a row's index is its identity
          <div key={b} id={`${id}-opt-${b}`} data-row={b} role="option" aria-selected={b === row} className={b === row ? 'selected' : undefined} onClick={() => onRow(b)}>
            <span className="resp-n">{b + 1}</span>
            <span className="resp-prompt" translate="no" title={tr('picker.prompt')}>
              {it.prompt}
            </span>
            <span className="resp-text" translate="no" title={tr('picker.response')}>
              {it.response || tr('picker.empty')}
            </span>
            <ClipCountBadges counts={it.clipped} />
            <span className="resp-score num" title={fullNumber(it.score)}>
              {tr('picker.score')} {formatNumber(it.score)}
            </span>
          </div>
        ))}
      </div>
    </div>
  );
}
