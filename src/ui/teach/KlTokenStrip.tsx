// One response drawn as text for the KL-shaping view: the tokens in reading order, wrapping between
// words, each with its return R_t as a bar above it and its penalty −β·KL_t as a bar below it
// (both signed about a zero line, on scales shared with the strip beside it), and the score as a
// badge on the last action token.
import { useTranslation } from 'react-i18next';
import { type KlCell, cellTotals, fmt, wordsOf } from './klShaping.ts';
import './klShaping.css';

/** Pixel half-heights of the two bar lanes: a bar of the largest magnitude fills its half. */
const RET_HALF = 18;
const PEN_HALF = 12;

function bar(value: number, scale: number, half: number, cls: string) {
  if (!Number.isFinite(value)) return <span className="kl-bar unknown" />;
  const h = Math.max(value === 0 ? 0 : 1, Math.round((Math.abs(value) / scale) * half));
  // Positive values grow up from the lane's middle, negative ones down.
  const style = value >= 0 ? { height: h, bottom: half } : { height: h, top: half };
  return <span className={`kl-bar ${cls}${value < 0 ? ' neg' : ''}`} style={style} />;
}

function shown(text: string): string {
  if (text === ' ') return '␣';
  if (text === '<eos>') return '⏎';
  return text;
}

interface StripProps {
  cells: KlCell[];
  scale: { penalty: number; ret: number };
  label: string;
  testId: string;
  /** Drawn as a recomputation (dashed, tinted), never to be read as the batch. */
  whatIf?: boolean;
}

export function KlTokenStrip({ cells, scale, label, testId, whatIf = false }: StripProps) {
  const { t } = useTranslation('teach');
  const totals = cellTotals(cells);
  return (
    <figure className={`kl-strip${whatIf ? ' whatif' : ''}`} data-testid={testId}>
      <figcaption className="small">{label}</figcaption>
      <ol className="kl-words" aria-label={label}>
        {wordsOf(cells.map((c, i) => ({ ...c, i }))).map((word) => (
          <li key={word[0].i} className="kl-word">
            {word.map((c) => (
              <span
                key={c.i}
                className="kl-token"
                role="img"
                data-testid="kl-token"
                data-penalty={c.penalty}
                aria-label={t('kl.tokenAria', {
                  n: c.i + 1,
                  text: c.text,
                  penalty: fmt(c.penalty),
                  score: c.score !== 0 ? t('kl.tokenAriaScore', { score: fmt(c.score) }) : '',
                  ret: fmt(c.ret),
                })}
                title={t('kl.tokenTitle', { penalty: fmt(c.penalty), score: c.score !== 0 ? t('kl.tokenTitleScore', { score: fmt(c.score) }) : '', ret: fmt(c.ret) })}
              >
                <span className="kl-lane ret" style={{ height: 2 * RET_HALF }}>
                  {bar(c.ret, scale.ret, RET_HALF, 'ret')}
                </span>
                <span className="kl-text" translate="no">
                  {shown(c.text)}
                </span>
                <span className="kl-lane pen" style={{ height: 2 * PEN_HALF }}>
                  {bar(c.penalty, scale.penalty, PEN_HALF, 'pen')}
                </span>
                {c.score !== 0 || c.i === cells.length - 1 ? (
                  <span className={`kl-score${c.score < 0 ? ' neg' : ''}`} data-testid="kl-score">
                    {c.score >= 0 ? '+' : ''}
                    {fmt(c.score)}
                  </span>
                ) : null}
              </span>
            ))}
          </li>
        ))}
      </ol>
      <p className="small muted kl-totals">{t('kl.totals', { penalty: fmt(totals.penalty), score: fmt(totals.score), first: fmt(totals.firstReturn) })}</p>
    </figure>
  );
}
