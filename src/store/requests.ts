// The page's requests to the trainer worker that expect an answer, keyed by request id. The worker
// echoes the id on the reply (or on the `error` the command ended in), so two requests in flight
// cannot take each other's answer. Every request ends exactly once: its reply, a named failure, or
// its time-out; the entry is gone after that, so nothing waits on a reply that cannot come.
import { t } from '../i18n/index.ts';
import type { WorkerToPage } from '../worker/protocol.ts';

/** The commands that are answered, and the reply each one gets. */
export interface ReplyOf {
  snapshot: Extract<WorkerToPage, { type: 'snapshot' }>;
  saveState: Extract<WorkerToPage, { type: 'state' }>;
  loadState: Extract<WorkerToPage, { type: 'stateLoaded' }>;
  trainRewardModel: Extract<WorkerToPage, { type: 'rewardModelTrained' }>;
  trainSft: Extract<WorkerToPage, { type: 'sftDone' }>;
  timeSft: Extract<WorkerToPage, { type: 'sftTimed' }>;
  hfOpen: Extract<WorkerToPage, { type: 'hfOpened' }>;
  hfGenerate: Extract<WorkerToPage, { type: 'hfGenerated' }>;
  hfTrain: Extract<WorkerToPage, { type: 'hfTrained' }>;
  hfExportAdapter: Extract<WorkerToPage, { type: 'hfAdapter' }>;
  hfLoadAdapter: Extract<WorkerToPage, { type: 'hfAdapterLoaded' }>;
}
export type RequestKind = keyof ReplyOf;
export type ReplyMessage = ReplyOf[RequestKind];

/** The reply type that answers each request kind. */
export const REPLY_TYPE: { readonly [K in RequestKind]: ReplyOf[K]['type'] } = {
  snapshot: 'snapshot',
  saveState: 'state',
  loadState: 'stateLoaded',
  trainRewardModel: 'rewardModelTrained',
  trainSft: 'sftDone',
  timeSft: 'sftTimed',
  hfOpen: 'hfOpened',
  hfGenerate: 'hfGenerated',
  hfTrain: 'hfTrained',
  hfExportAdapter: 'hfAdapter',
  hfLoadAdapter: 'hfAdapterLoaded',
};

/**
 * How long each request may go unanswered. The worker handles commands one at a time, so a reply
 * can wait behind an iteration, a trainer build or a held-out evaluation (seconds to a minute on
 * the CPU backend). A quiet saveState gets no reply at all when the worker has no trainer: its
 * minute is how long it blocks the next automatic save. loadState builds the trainer (and may wait
 * for the kernels to compile); training the reward model runs several epochs over the labels.
 */
export const REQUEST_TIMEOUT_MS: { readonly [K in RequestKind]: number } = {
  snapshot: 120_000,
  saveState: 60_000,
  loadState: 300_000,
  trainRewardModel: 600_000,
  // SFT at the largest size on a software adapter runs for hours; the page's Cancel ends it sooner.
  trainSft: 6 * 3_600_000,
  // A few steps, behind whatever the worker is doing (compiling the kernels, an evaluation).
  timeSft: 300_000,
  // Reading and uploading a model of a few GB from a slow disk, behind whatever the worker is doing.
  hfOpen: 3_600_000,
  // Up to MAX_NEW_TOKENS_CAP steps of a model on a software adapter.
  hfGenerate: 1_800_000,
  // Up to 1000 iterations of a real model on a software adapter; the panel's Stop ends it sooner.
  hfTrain: 6 * 3_600_000,
  // Reading the adapter back, behind whatever the worker is doing.
  hfExportAdapter: 300_000,
  // Reading and uploading an adapter (a few MB), behind whatever the worker is doing.
  hfLoadAdapter: 300_000,
};

/** Why a request ended without its reply; `kind` says which request. */
export class RequestFailure extends Error {
  constructor(
    readonly kind: RequestKind,
    message: string,
  ) {
    super(message);
    this.name = 'RequestFailure';
  }
}
/** The command could not be handed to a worker (none could start, or postMessage threw). */
export class SendFailedError extends RequestFailure {
  override name = 'SendFailedError';
}
/** No reply within REQUEST_TIMEOUT_MS[kind]. */
export class RequestTimeoutError extends RequestFailure {
  override name = 'RequestTimeoutError';
}
/** The worker answered with an `error` carrying this request's id. */
export class WorkerReportedError extends RequestFailure {
  override name = 'WorkerReportedError';
}
/** The worker was terminated, replaced or crashed before it answered. */
export class WorkerGoneError extends RequestFailure {
  override name = 'WorkerGoneError';
}
/** The reply belonged to a run that was reset, or will never come (the worker has nothing to give). */
export class RequestDroppedError extends RequestFailure {
  override name = 'RequestDroppedError';
}

interface Pending {
  kind: RequestKind;
  resolve(reply: ReplyMessage): void;
  reject(e: RequestFailure): void;
  timer: ReturnType<typeof setTimeout>;
}

export class PendingRequests {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();

  /** Registers a request (its time-out starts now); the promise settles exactly once. */
  open<K extends RequestKind>(kind: K): { id: number; reply: Promise<ReplyOf[K]> } {
    const id = this.nextId++;
    const reply = new Promise<ReplyOf[K]>((resolve, reject) => {
      const timer = setTimeout(
        () => this.fail(id, new RequestTimeoutError(kind, t('notices:reason.noReply', { seconds: REQUEST_TIMEOUT_MS[kind] / 1000 }))),
        REQUEST_TIMEOUT_MS[kind],
      );
      this.pending.set(id, { kind, resolve: resolve as (r: ReplyMessage) => void, reject, timer });
    });
    return { id, reply };
  }

  /**
   * Settles the request a reply answers: the one its id names, else (a reply fed through the
   * page's test hook carries none) the oldest request of the matching kind. False when none waits.
   */
  answer(msg: ReplyMessage): boolean {
    const id = this.idFor(msg.type, msg.requestId);
    if (id === undefined) return false;
    const p = this.take(id)!;
    p.resolve(msg);
    return true;
  }

  /** Fails the request a reply of `replyType` (with `requestId`, if any) would have answered. */
  drop(replyType: ReplyMessage['type'], requestId: number | undefined, e: (kind: RequestKind) => RequestFailure): boolean {
    const id = this.idFor(replyType, requestId);
    if (id === undefined) return false;
    return this.fail(id, e(this.pending.get(id)!.kind));
  }

  fail(id: number, e: RequestFailure): boolean {
    const p = this.take(id);
    if (!p) return false;
    p.reject(e);
    return true;
  }

  /** Fails every pending request of `kind` (all kinds when omitted). */
  failAll(e: (kind: RequestKind) => RequestFailure, kind?: RequestKind): void {
    for (const [id, p] of [...this.pending]) if (kind === undefined || p.kind === kind) this.fail(id, e(p.kind));
  }

  kindOf(id: number): RequestKind | undefined {
    return this.pending.get(id)?.kind;
  }

  has(kind: RequestKind): boolean {
    for (const p of this.pending.values()) if (p.kind === kind) return true;
    return false;
  }

  get size(): number {
    return this.pending.size;
  }

  private idFor(replyType: ReplyMessage['type'], requestId: number | undefined): number | undefined {
    if (requestId !== undefined) {
      const p = this.pending.get(requestId);
      return p && REPLY_TYPE[p.kind] === replyType ? requestId : undefined;
    }
    for (const [id, p] of this.pending) if (REPLY_TYPE[p.kind] === replyType) return id;
    return undefined;
  }

  private take(id: number): Pending | undefined {
    const p = this.pending.get(id);
    if (!p) return undefined;
    clearTimeout(p.timer);
    this.pending.delete(id);
    return p;
  }
}
