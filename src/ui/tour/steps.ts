// The guided tour, one entry per step: where it points (CSS selectors, the first one on the page
// wins, so a step survives a layout that hides its first choice, e.g. presenter mode's 4 charts)
// and what it says. Adding a step is adding an entry here. Every string of the tour lives in this
// file, for the translation pass.
import type { Preset } from '../../rl/presets.ts';

/** What a step's text may depend on: the experiment chosen when the tour opens. */
export interface TourContext {
  preset: Pick<Preset, 'name' | 'watch'> | null;
}

export interface TourStep {
  id: string;
  /** Selectors tried in order; with none on the page the step shows centred, pointing at nothing. */
  anchors: readonly string[];
  title: string;
  body: (ctx: TourContext) => string;
  side?: 'top' | 'right' | 'bottom' | 'left';
}

export const TOUR_TEXT = {
  helpButton: 'Tour',
  helpButtonLabel: 'Take the guided tour of one PPO iteration',
  next: 'Next →',
  previous: '← Back',
  done: 'Done',
  close: 'Close the tour',
  progress: 'Step {{current}} of {{total}}',
  loadFailed: 'The tour could not be loaded; reload the page to try again.',
  inviteTitle: 'New to PPO?',
  inviteBody: (steps: number) => `A ${steps}-step tour shows what one PPO iteration does here and which curves to read. ← / → move through it, Esc closes it.`,
  inviteStart: 'Take the tour',
  inviteDismiss: 'Not now',
  inviteLater: 'The Tour button in the header brings it back at any time.',
} as const;

export const TOUR_STEPS: readonly TourStep[] = [
  {
    id: 'loop',
    anchors: ['.pipeline', '.controls'],
    title: 'What PPO does here, over and over',
    body: () =>
      'Each iteration has three stages. Rollout: the actor (the policy being trained) samples answers to a batch of prompts. ' +
      'Experience: the frozen reference model scores those tokens for the KL, the reward (a rule or a reward model) scores each answer, ' +
      'and the critic estimates values for GAE (GRPO and RLOO compare answers within a group instead). ' +
      'Update: a few clipped gradient steps on the actor and the critic. Actor, reference, critic, reward: the four models of RLHF.',
    side: 'bottom',
  },
  {
    id: 'experiments',
    anchors: ['.presets'],
    title: 'Pick an experiment',
    body: () =>
      'Each card is one lesson: first the task, then the curve to watch, then what `npm run learning` measured for it. ' +
      'A click sets the knobs it needs; the settings below show every one of them.',
    side: 'right',
  },
  {
    id: 'start',
    anchors: ['.controls .btn.primary', '.controls'],
    title: 'Press Start',
    body: ({ preset }) =>
      'Start (or Space) trains until the experiment’s budget; Pause stops after the current stage, Step runs one iteration. ' +
      (preset ? `With “${preset.name}”: ${preset.watch}` : 'No experiment is chosen yet: pick a card first, and it will say what to watch.'),
    side: 'bottom',
  },
  {
    id: 'reward',
    anchors: ['[data-testid="chart-reward_mean"]', '.content'],
    title: 'Reward',
    body: () =>
      'The mean score of the batch’s answers, before any KL penalty. It should rise. ' +
      'A reward that keeps rising while the answers get worse is reward hacking: the policy found what the scorer likes, not what you meant.',
    side: 'left',
  },
  {
    id: 'heldout',
    anchors: ['[data-testid="chart-heldout"]', '.content'],
    title: 'Held-out accuracy',
    body: () =>
      'Prompts the policy never trains on, evaluated every few iterations, by sampling and greedily; iteration 0 is the SFT model. ' +
      'This curve says what the policy learned, not what it memorised.',
    side: 'left',
  },
  {
    id: 'kl',
    anchors: ['[data-testid="chart-kl"]', '[data-testid="chart-kl_token_mean"]', '.content'],
    title: 'KL: how far from the reference',
    body: () =>
      'How far the policy has moved from the frozen reference (SFT) model on the tokens it sampled. ' +
      'Small and steady: it improves while still writing like the reference. Climbing without end: it drifts to text the reference would never write. ' +
      'β, the KL coefficient, is the leash.',
    side: 'left',
  },
  {
    id: 'clipfrac',
    anchors: ['[data-testid="chart-clipfrac"]', '.content'],
    title: 'Clip fraction',
    body: () =>
      'The share of tokens whose probability ratio π_new / π_old left [1 − ε, 1 + ε], where the clipped objective stops their gradient. ' +
      'A few percent is healthy. Much more means each batch asks to move further than ε allows: fewer epochs or a lower learning rate, or a wider ε.',
    side: 'left',
  },
  {
    id: 'clipping',
    anchors: ['#tab-clipping', '.teaching'],
    title: 'The clipping view',
    body: () =>
      'The Clipping tab draws PPO’s clipped objective against the ratio, for a positive and a negative advantage, with ε marked. ' +
      'The last update’s tokens stack up beneath as a histogram: the red ones were clipped and gave no gradient.',
    side: 'top',
  },
  {
    id: 'inside',
    anchors: ['.teaching [role="tablist"]', '.teaching'],
    title: 'Inside one iteration',
    body: () =>
      'These tabs open one iteration up, from its latest batch: clipping, the KL penalty per token, the samples, the three policies. ' +
      'Pause first, so the batch holds still while you read it. The tour is always one click away: the Tour button in the header.',
    side: 'top',
  },
];

/** The first element on the page that one of `anchors` selects, or undefined. A bad selector is skipped. */
export function findAnchor(anchors: readonly string[], root: ParentNode = document): Element | undefined {
  for (const selector of anchors) {
    try {
      const el = root.querySelector(selector);
      if (el) return el;
    } catch {
      // An invalid selector points at nothing; the next one may still match.
    }
  }
  return undefined;
}

/** The step's text with this context, never throwing (a missing preset reads as none chosen). */
export function stepBody(step: TourStep, ctx: TourContext): string {
  try {
    return step.body(ctx);
  } catch {
    return step.body({ preset: null });
  }
}
