// The responses of the inspected batch as a listbox: prompt, response text and score; ↑ / ↓,
// Home and End move the selection (the active option is announced through aria-activedescendant).
import { type KeyboardEvent, useEffect, useId, useRef } from 'react';
import { useTranslation } from 'react-i18next';
import { formatNumber, fullNumber } from './format.ts';

export interface ResponseItem {
  prompt: string;
  response: string;
  score: number;
  length: number;
}

export function ResponsePicker({ items, row, onRow }: { items: ResponseItem[]; row: number; onRow(r: number): void }) {
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
      <span id={`${id}-label`} className="picker-label">
        {tr('picker.responses')} <span className="muted small">{tr('picker.responsesHint')}</span>
      </span>
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
            <span className="resp-score num" title={fullNumber(it.score)}>
              {tr('picker.score')} {formatNumber(it.score)}
            </span>
          </div>
        ))}
      </div>
    </div>
  );
}
