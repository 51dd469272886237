// The worker tests collect every message a TrainerHost posts; this picks those of one type, typed.
import type { WorkerToPage } from '../../src/worker/protocol.ts';

/** `of('metrics')` → the metrics messages posted so far, as their own message type. */
export function messagesOf(msgs: readonly WorkerToPage[]) {
  return <T extends WorkerToPage['type']>(type: T): Extract<WorkerToPage, { type: T }>[] =>
    msgs.filter((m): m is Extract<WorkerToPage, { type: T }> => m.type === type);
}
