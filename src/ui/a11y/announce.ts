// What the page's live region says when the trainer's state changes: training started, resumed,
// paused or stopped, and the message that came with it (NaN found, device lost, budget reached).
// Pure: the Announcer component feeds it the store's state before and after each change.
import type { Notice, RunState } from '../../store/appStore.ts';

export interface AnnounceState {
  runState: RunState;
  notice: Notice | null;
}

const RUN_STATE_TEXT: Record<RunState, Partial<Record<RunState, string>>> = {
  idle: { running: 'Training started.', paused: 'Training paused.' },
  paused: { running: 'Training resumed.', idle: 'Training stopped.' },
  running: { paused: 'Training paused.', idle: 'Training stopped.' },
};

/** The sentence to announce for the change from `prev` to `next`, or null when nothing worth saying changed. */
export function announcement(prev: AnnounceState, next: AnnounceState): string | null {
  const parts: string[] = [];
  if (prev.runState !== next.runState) {
    const text = RUN_STATE_TEXT[prev.runState][next.runState];
    if (text) parts.push(text);
  }
  // Errors are already announced at once by their role="alert" notice; an echo repeats the pause just said.
  if (next.notice && next.notice !== prev.notice && next.notice.tone !== 'error' && !next.notice.echo && next.notice.text !== prev.notice?.text) parts.push(next.notice.text);
  return parts.length > 0 ? parts.join(' ') : null;
}
