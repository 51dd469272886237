// What the page's live region says when the trainer's state changes: training started, resumed,
// paused or stopped, and the message that came with it (NaN found, device lost, budget reached).
// Pure: the Announcer component feeds it the store's state before and after each change.
import { t } from '../../i18n/index.ts';
import type { Notice, RunState } from '../../store/appStore.ts';
import { sentences } from '../../store/notices.ts';

export interface AnnounceState {
  runState: RunState;
  notice: Notice | null;
}

/** Which sentence (notices:announce.*) a change of run state says. */
const RUN_STATE_TEXT: Record<RunState, Partial<Record<RunState, 'started' | 'paused' | 'resumed' | 'stopped'>>> = {
  idle: { running: 'started', paused: 'paused' },
  paused: { running: 'resumed', idle: 'stopped' },
  running: { paused: 'paused', idle: 'stopped' },
};

/** The sentence to announce for the change from `prev` to `next`, or null when nothing worth saying changed. */
export function announcement(prev: AnnounceState, next: AnnounceState): string | null {
  const parts: string[] = [];
  if (prev.runState !== next.runState) {
    const said = RUN_STATE_TEXT[prev.runState][next.runState];
    if (said) parts.push(t(`notices:announce.${said}`));
  }
  // Errors are already announced at once by their role="alert" notice; an echo repeats the pause just said.
  if (next.notice && next.notice !== prev.notice && next.notice.tone !== 'error' && !next.notice.echo && next.notice.text !== prev.notice?.text) parts.push(next.notice.text);
  return parts.length > 0 ? sentences(parts) : null;
}
