// The page's line to the trainer Web Worker: starts it for the chosen backend (replacing one made
// for another), posts commands, and ends each request on the reply carrying its id (requests.ts).
// What the messages mean to the page is the client's business (trainerClient.ts).
import { t } from '../i18n/index.ts';
import { isWorkerMessage, type BackendChoice, type PageToWorker, type WorkerToPage } from '../worker/protocol.ts';
import * as notices from './notices.ts';
import { PendingRequests, SendFailedError, WorkerGoneError, type ReplyOf, type RequestKind } from './requests.ts';

/** What the connection needs of a Worker (a real one, or a test's fake). */
export interface WorkerLike {
  postMessage(msg: PageToWorker, transfer: Transferable[]): void;
  onmessage: ((ev: MessageEvent) => void) | null;
  onerror: ((ev: ErrorEvent) => void) | null;
  terminate(): void;
}

export interface ConnectionDeps {
  /** A new trainer worker; throws when none can start. */
  createWorker(): WorkerLike;
  /**
   * What a worker is told before its `init`, when it is put to use (a preloaded one later than it
   * was made): the inspector's capture switch and the SFT models the page keeps, as they are then.
   */
  setUp(w: WorkerLike): void;
  /** The backend the page wants now: a worker made for another is replaced. */
  backend(): BackendChoice;
  /** Turns on the worker's debug* messages. */
  testHooks: boolean;
  /** Every message of the current worker (a crash arrives as an `error`). */
  onMessage(msg: WorkerToPage): void;
  /** A command could not be sent; `text` says so. */
  onSendFailed(tone: 'warn' | 'error', text: string): void;
  /** The worker was dropped (its compile progress means nothing now). */
  onDropped(): void;
}

type CommandBody<K extends RequestKind> = Omit<Extract<PageToWorker, { type: K }>, 'type' | 'requestId'>;

export class TrainerConnection {
  readonly requests = new PendingRequests();
  private worker: WorkerLike | null = null;
  private workerBackend: BackendChoice | null = null;
  /** The worker answered `ready` (its backend exists). */
  private ready = false;
  /** A command other than the warm-up's has been sent to this worker. */
  private commanded = false;
  /** A worker made ahead (preload), not yet told its backend: the next ensure() adopts it. */
  private preloaded: WorkerLike | null = null;

  constructor(private readonly deps: ConnectionDeps) {}

  /** The worker for the backend wanted now, if one is running (nothing is started). */
  get current(): WorkerLike | null {
    return this.worker && this.workerBackend === this.deps.backend() ? this.worker : null;
  }

  get exists(): boolean {
    return this.worker !== null;
  }

  markReady(): void {
    this.ready = true;
  }

  /** Nothing was asked of this worker and it never became ready: a warm-up that failed to start. */
  get unused(): boolean {
    return !this.ready && !this.commanded;
  }

  drop(): void {
    const had = this.worker !== null;
    this.worker?.terminate();
    this.worker = null;
    this.workerBackend = null;
    this.ready = false;
    this.commanded = false;
    if (had) this.requests.failAll((kind) => new WorkerGoneError(kind, t('notices:reason.workerStopped')));
    this.deps.onDropped();
  }

  /**
   * Makes the worker before it is wanted, so the browser loads and parses its script (~0.7 MB)
   * while the page renders and the WebGPU self-test runs; it is sent nothing, and so starts no
   * device, until ensure() adopts it. A worker that cannot start now is left to ensure().
   */
  preload(): void {
    if (this.worker || this.preloaded) return;
    let w: WorkerLike;
    try {
      w = this.deps.createWorker();
    } catch {
      return;
    }
    // A script that fails to load before the worker is adopted: ensure() makes another, which reports it.
    w.onerror = () => {
      if (this.preloaded !== w) return;
      w.terminate();
      this.preloaded = null;
    };
    this.preloaded = w;
  }

  /** The worker for the backend wanted now, started if needed; null when none can start. */
  ensure(): WorkerLike | null {
    const backend = this.deps.backend();
    if (this.worker && this.workerBackend === backend) return this.worker;
    this.drop();
    let w: WorkerLike;
    try {
      w = this.preloaded ?? this.deps.createWorker();
    } catch {
      return null;
    } finally {
      this.preloaded = null;
    }
    // A dropped worker's last messages are not this page's business any more.
    w.onmessage = (ev) => {
      if (this.worker === w && isWorkerMessage(ev.data)) this.deps.onMessage(ev.data);
    };
    w.onerror = (ev) => {
      if (this.worker !== w) return;
      const message = ev.message || t('notices:reason.workerCrashed');
      this.requests.failAll((kind) => new WorkerGoneError(kind, message));
      this.deps.onMessage({ type: 'error', message });
    };
    this.deps.setUp(w);
    w.postMessage({ type: 'init', backend, testHooks: this.deps.testHooks }, []);
    this.worker = w;
    this.workerBackend = backend;
    return w;
  }

  /** Hands a command to the worker (starting one if needed); false, with a notice, when it cannot. */
  send(msg: PageToWorker, transfer: Transferable[] = []): boolean {
    return this.post(this.ensure(), msg, transfer) === null;
  }

  /**
   * Sends a request and resolves with the reply carrying its id. Rejects with SendFailedError (no
   * worker, or postMessage threw), WorkerReportedError (its `error`), RequestTimeoutError,
   * WorkerGoneError or RequestDroppedError; the pending entry is gone in every case.
   */
  request<K extends RequestKind>(kind: K, body: CommandBody<K>, transfer: Transferable[] = []): Promise<ReplyOf[K]> {
    // The worker first (replacing one fails the old one's requests), then the entry: it exists
    // before this returns, so no reply can arrive ahead of it.
    const w = this.ensure();
    const { id, reply } = this.requests.open(kind);
    const failed = this.post(w, { type: kind, ...body, requestId: id } as PageToWorker, transfer);
    if (failed !== null) this.requests.fail(id, new SendFailedError(kind, failed));
    return reply;
  }

  /**
   * A request to the worker that runs now, as no user command: it starts no worker, and a
   * failure is no notice (the automatic state saves). Null when there is no such worker.
   */
  quietRequest<K extends RequestKind>(kind: K, body: CommandBody<K>): Promise<ReplyOf[K]> | null {
    const w = this.current;
    if (!w) return null;
    const { id, reply } = this.requests.open(kind);
    try {
      w.postMessage({ type: kind, ...body, requestId: id } as PageToWorker, []);
    } catch (e) {
      this.requests.fail(id, new SendFailedError(kind, e instanceof Error ? e.message : String(e)));
    }
    return reply;
  }

  /** Posts to the worker that runs now as no user command (it starts none); false when there is none. */
  quietSend(msg: PageToWorker): boolean {
    const w = this.current;
    if (!w) return false;
    w.postMessage(msg, []);
    return true;
  }

  /** Posts to `w`; null when it went, else why not (and the notice says so). */
  private post(w: WorkerLike | null, msg: PageToWorker, transfer: Transferable[]): string | null {
    this.commanded = true;
    if (!w) {
      this.deps.onSendFailed('warn', notices.trainerMissing(msg.type));
      return notices.TRAINER_MISSING;
    }
    try {
      w.postMessage(msg, transfer);
      return null;
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e);
      this.deps.onSendFailed('error', notices.sendFailed(msg.type, why));
      return why;
    }
  }
}
