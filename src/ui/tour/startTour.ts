// Opens the guided tour with driver.js, loaded on the first use only (it is not part of the first
// paint). The steps come from TOUR_STEPS; the text is set as text, never as HTML, in the language
// the page shows when the tour opens (its namespace loads with driver.js).
import { loadNamespaces, t } from '../../i18n/index.ts';
import { findPreset } from '../../rl/presets.ts';
import { useApp } from '../../store/appStore.ts';
import { findAnchor, TOUR_STEPS, type TourContext } from './steps.ts';
import { stepBodyNodes, stepTitle } from './tourText.ts';
import { markTourSeen } from './tourMemory.ts';

let opening = false;
let active: { isActive: () => boolean } | null = null;

/**
 * While the tour is open, the page's own single-key shortcuts (Space start/pause, S step, R reset)
 * must not fire behind it: a student pressing R would reset the run they are being shown.
 */
function muteShortcuts(e: KeyboardEvent): void {
  if (e.target instanceof HTMLButtonElement && (e.key === ' ' || e.key === 'Enter')) return;
  if ([' ', 's', 'S', 'r', 'R'].includes(e.key)) e.stopPropagation();
}

/**
 * The tour's words for a loaded preset, in the page's language (presets.ts keeps the English, which
 * names it in links). The tour sets text, not HTML: the card's markup (<code>good</code>) is left out.
 */
export function tourPreset(name: string | null): TourContext['preset'] {
  const preset = name ? findPreset(name) : undefined;
  const words = (field: 'name' | 'watch') => t(`presets:preset.${preset!.id}.${field}`).replace(/<\/?[a-z]+>/g, '');
  return preset ? { name: words('name'), watch: words('watch') } : null;
}

function currentContext(): TourContext {
  return { preset: tourPreset(useApp.getState().preset) };
}

/** Starts the tour at its first step; resolves once it is on screen (or failed to load). */
export async function startTour(): Promise<void> {
  if (opening || active?.isActive()) return;
  opening = true;
  try {
    const [{ driver }] = await Promise.all([import('driver.js'), import('driver.js/dist/driver.css'), import('./tour.css'), loadNamespaces(['tour'])]);
    const close = t('tour:close');
    const ctx = currentContext();
    let settled = -1;
    const reducedMotion = window.matchMedia?.('(prefers-reduced-motion: reduce)').matches ?? false;
    const tour = driver({
      animate: !reducedMotion,
      duration: 300,
      showProgress: true,
      // driver.js fills {{current}} and {{total}} itself: the placeholders pass through i18next untouched.
      progressText: t('tour:progress', { current: '{{current}}', total: '{{total}}' }),
      nextBtnText: t('tour:next'),
      prevBtnText: t('tour:previous'),
      doneBtnText: t('tour:done'),
      allowKeyboardControl: true,
      allowClose: true,
      overlayClickBehavior: 'close',
      smoothScroll: true,
      stagePadding: 6,
      stageRadius: 10,
      popoverClass: 'ppo-tour',
      onPopoverRender: (popover) => {
        // driver.js writes title and description as HTML; they are written here as text instead,
        // so nothing in a step (a preset's line, a name) is ever parsed as markup.
        const step = TOUR_STEPS[tour.getActiveIndex() ?? 0];
        if (!step) return;
        popover.title.textContent = stepTitle(step);
        popover.description.replaceChildren(...stepBodyNodes(step, ctx));
        popover.description.style.display = 'block';
        popover.wrapper.setAttribute('data-testid', 'tour-popover');
        popover.wrapper.setAttribute('data-step', step.id);
        if (settled === (tour.getActiveIndex() ?? 0)) popover.wrapper.setAttribute('data-settled', step.id);
        popover.closeButton.setAttribute('aria-label', close);
        popover.closeButton.title = close;
      },
      // driver.js ignores ← / → until a step's move has finished; marking the settled step lets
      // a test (and a screen reader's next read) wait for it instead of guessing a delay.
      // The popover may be drawn again after that (a scroll or resize), so the mark is restored there.
      onHighlightStarted: () => {
        settled = -1;
      },
      onHighlighted: (_element, _step, { state }) => {
        settled = state.activeIndex ?? 0;
        const step = TOUR_STEPS[settled];
        const wrapper = document.querySelector<HTMLElement>('.driver-popover.ppo-tour') ?? state.popover?.wrapper;
        if (step) wrapper?.setAttribute('data-settled', step.id);
        // Keyboard focus moves into the step once it is on screen (Tab, Enter and Esc act there).
        wrapper?.querySelector<HTMLButtonElement>('.driver-popover-next-btn')?.focus({ preventScroll: true });
      },
      onDestroyed: () => {
        window.removeEventListener('keydown', muteShortcuts, true);
        markTourSeen();
      },
      steps: TOUR_STEPS.map((step) => ({
        element: () => findAnchor(step.anchors) as Element,
        // Placeholders only (driver.js hides an empty part); onPopoverRender writes the text.
        popover: { title: '…', description: '…', side: step.side, align: 'start' as const },
      })),
    });
    window.addEventListener('keydown', muteShortcuts, true);
    active = tour;
    tour.drive();
  } catch (e) {
    useApp.getState().setNotice({ tone: 'error', text: t('tour:loadFailedWithError', { error: String(e) }) });
  } finally {
    opening = false;
  }
}
