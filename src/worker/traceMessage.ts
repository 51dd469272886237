// The `trace` message of a captured iteration: the trace with its prompts and each response token
// decoded by the task's tokenizer (the page has no tokenizer of the run), and the buffers of its
// typed arrays to transfer rather than copy.
import type { IterationTrace } from '../rl/inspect/trace.ts';
import { tokenText } from '../rl/samples.ts';
import { getTask, taskTokenizer } from '../tasks/index.ts';
import type { WorkerToPage } from './protocol.ts';

type TraceMessage = Extract<WorkerToPage, { type: 'trace' }>;

/** Each response token of the trace as text: '' for padding, '<eos>' for the end. */
export function traceTokenText(taskName: string, trace: IterationTrace): string[] {
  const tok = taskTokenizer(getTask(taskName));
  return Array.from(trace.responseTokens, (id) => {
    if (id === tok.padId) return '';
    try {
      return tokenText(tok, id);
    } catch {
      return '?'; // an id outside the vocabulary: shown, never fatal
    }
  });
}

/** Every distinct ArrayBuffer under the trace's typed arrays (a buffer listed twice fails to transfer). */
export function traceBuffers(trace: IterationTrace): ArrayBuffer[] {
  const out = new Set<ArrayBuffer>();
  const add = (a: ArrayBufferView | null) => {
    if (a && a.buffer instanceof ArrayBuffer) out.add(a.buffer);
  };
  for (const a of [
    trace.responseTokens,
    trace.promptTokens ?? null,
    trace.promptMask ?? null,
    trace.actionMask,
    trace.group,
    trace.scores,
    trace.baselines ?? null,
    trace.rolloutLogprobs,
    trace.oldLogprobs,
    trace.refLogprobs,
    trace.values,
  ])
    add(a);
  for (const a of Object.values(trace.stored)) add(a);
  for (const mb of trace.minibatches) for (const a of [mb.rows, mb.newLogprobs, mb.newValues]) add(a);
  return [...out];
}

export function traceMessage(taskName: string, iter: number, trace: IterationTrace, prompts: string[]): { msg: TraceMessage; transfer: ArrayBuffer[] } {
  return { msg: { type: 'trace', iter, trace, prompts, tokenText: traceTokenText(taskName, trace) }, transfer: traceBuffers(trace) };
}
