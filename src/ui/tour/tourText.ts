// What the tour says, in the page's language, worded at call time from the `tour` namespace (it is
// fetched on first use: callers load it first, see startTour and TourLauncher).
import { t } from '../../i18n/index.ts';
import type { TourContext, TourStep } from './steps.ts';

/** A step's title. */
export function stepTitle(step: TourStep): string {
  return t(`tour:steps.${step.id}.title`);
}

/** The probability ratio as the formulas write it (kept out of the translations: it is notation). */
const RATIO = 'π_new / π_old';
/** The command that measured each card's promise: a command, the same in every language. */
export const TOUR_COMMAND = 'npm run learning';

function body(step: TourStep, { preset }: TourContext): string {
  if (step.id !== 'start') return t(`tour:steps.${step.id}.body`, { ratio: RATIO, command: TOUR_COMMAND });
  return preset ? t('tour:steps.start.bodyWithPreset', { name: preset.name, watch: preset.watch }) : t('tour:steps.start.bodyNoPreset');
}

/** The step's text with this context, never throwing (a preset that cannot be read reads as none chosen). */
export function stepBody(step: TourStep, ctx: TourContext): string {
  try {
    return body(step, ctx);
  } catch {
    return body(step, { preset: null });
  }
}

/**
 * The step's text as DOM nodes: plain text, with the command set as code (the same in every
 * language, so it is not read as untranslated prose). Built from text nodes: never parsed as markup.
 */
export function stepBodyNodes(step: TourStep, ctx: TourContext): Node[] {
  const parts = stepBody(step, ctx).split(TOUR_COMMAND);
  return parts.flatMap((part, i) => {
    const text = document.createTextNode(part);
    if (i === parts.length - 1) return [text];
    const code = document.createElement('code');
    code.textContent = TOUR_COMMAND;
    return [text, code];
  });
}
