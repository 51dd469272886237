// The Inspect tab's words live in the `inspect` namespace (src/i18n/locales/<locale>/inspect.json).
// Here: the math the labels show in every language (symbols, not words), and the translation of
// the walk-through's own words, which src/rl/inspect/formulas.ts writes in English (FORMULA_TEXT)
// for the CLIs and tests: the page looks each one up by step id or note key instead.
import { t } from '../../i18n/index.ts';
import { type FormulaStepId, FORMULA_TEXT, type ClipSide } from '../../rl/inspect/index.ts';
import type { NumRule } from '../../rl/config.ts';
import type { ColumnKey } from './steps.ts';

export const INSPECT_TEXT = {
  /** The tab's English name, as the teaching views' tab list shows it (translated as inspect:tab). */
  tab: 'Inspect',
} as const;

/** Column labels that are notation alone, the same in every language. */
export const SYMBOL_LABELS: Partial<Record<ColumnKey, string>> = {
  rollout: 'log π_rollout',
  old: 'log π_old',
  ref: 'log π_ref',
  klPen: '−β·KL_t',
  normScore: 's̃',
  reward: 'r_t',
  value: 'V_t',
  delta: 'δ_t',
  ret: 'R_t',
  newLp: 'log π_new',
  loss: 'L_t',
  aggW: 'w_t',
  grad: 'g_t',
  vNew: 'V_new',
  vUnclipped: '½(V−R)²',
  vClipTerm: '½(V_clip−R)²',
  vLoss: 'L^V_t = max',
};

/** The per-token KL column's label: notation and the estimator's id. */
export const klLabel = (estimator: string) => `KL_t (${estimator})`;

/** The ratio column's tooltip: the definition itself. */
export const RATIO_TITLE = 'π_new / π_old';

/** Math the translated sentences quote ({{var}} in the locale files), never translated. */
export const MATH = {
  d: 'd = log π_old − log π_ref',
  low: '1 − ε_low',
  high: '1 + ε_high',
  dual: '−c·A',
  grad: '∂loss/∂log π_new',
  kl: 'KL(π_new‖π_ref)',
  piOld: 'π_old',
  piRef: 'π_ref',
  ratio: 'π_new/π_old',
} as const;

const CLIP_BOUND: Record<ClipSide, string> = { low: MATH.low, high: MATH.high, dual: MATH.dual, none: '' };

/** A walk-through step's title in the page's language. */
/** An own-model run's name in the pickers: a run file's recorded iteration, or the live run, each with its model. */
export function ownModelRunName(x: { file?: string; model?: string }): string {
  return x.file !== undefined ? t('inspect:picker.ownModelRecorded', { file: x.file, model: x.model }) : t('inspect:picker.ownModelRun', { model: x.model });
}

export function stepTitle(id: FormulaStepId): string {
  return t(`inspect:steps.${id}.title`);
}

/** Why a walk-through step is done, in the page's language. */
export function stepWhy(id: FormulaStepId): string {
  return t(`inspect:steps.${id}.why`, MATH);
}

/** FORMULA_TEXT.notes as the formulas escape them inside \text{…} (notes hold names such as ε_low). */
const texEscape = (s: string) => s.replace(/[_%&#$]/g, (c) => `\\${c}`);

type NoteKey = Exclude<keyof typeof FORMULA_TEXT.notes, 'clip'>;
const NOTE_KEYS = Object.keys(FORMULA_TEXT.notes).filter((k) => k !== 'clip') as NoteKey[];

/** Each English note of FORMULA_TEXT with its translation in the page's language. */
export function formulaNotes(): { en: string; local: string }[] {
  const notes = NOTE_KEYS.map((k) => ({ en: FORMULA_TEXT.notes[k], local: t(`inspect:notes.${k}`) }));
  const sides = Object.keys(FORMULA_TEXT.notes.clip) as ClipSide[];
  return [...notes, ...sides.map((s) => ({ en: FORMULA_TEXT.notes.clip[s], local: t(`inspect:notes.clip.${s}`, { bound: CLIP_BOUND[s] }) }))];
}

/** A formula with the walk-through's words (\text{note}) in the page's language; the math stays. */
export function localiseTex(tex: string): string {
  let out = tex;
  for (const { en, local } of formulaNotes()) if (en !== local) out = out.replaceAll(`\\text{${texEscape(en)}}`, `\\text{${texEscape(local)}}`);
  return out;
}

/** A what-if knob's range in words, as describeRange (src/rl/config.ts) says it in English. */
export function rangeText(r: NumRule): string {
  const bound = (v: number, open: boolean | undefined) => (open ? t('inspect:whatIf.range.exclusive', { bound: v }) : String(v));
  const key = `${r.integer ? 'integer' : 'number'}${r.nullable ? 'OrEmpty' : ''}`;
  // Chinese sets no space after a full-width bracket ("0（不含）到 1"), which the template's spacing would leave.
  return t(`inspect:whatIf.range.${key}`, { min: bound(r.min, r.minOpen), max: bound(r.max, r.maxOpen) }).replaceAll('） ', '）');
}
