// A TrainerClient wired to fake workers and a fresh store, for tests of the page's side of the
// trainer protocol: the test plays the worker, reading the commands it got and posting replies.
import { vi } from 'vitest';
import { createAppStore } from '../../src/store/appStore.ts';
import type { ResumePoint } from '../../src/store/resume.ts';
import { TrainerClient } from '../../src/store/trainerClient.ts';
import type { WorkerLike } from '../../src/store/trainerConnection.ts';
import type { PageToWorker, WorkerToPage } from '../../src/worker/protocol.ts';

export class FakeWorker implements WorkerLike {
  readonly sent: PageToWorker[] = [];
  terminated = false;
  /** Set to make postMessage throw (as a DataCloneError would). */
  postError: Error | null = null;
  onmessage: ((ev: MessageEvent) => void) | null = null;
  onerror: ((ev: ErrorEvent) => void) | null = null;

  postMessage(msg: PageToWorker): void {
    if (this.postError) throw this.postError;
    this.sent.push(msg);
  }

  terminate(): void {
    this.terminated = true;
  }

  /** Posts a message to the page, as the worker would. */
  reply(msg: WorkerToPage): void {
    this.onmessage?.({ data: msg } as MessageEvent);
  }

  crash(message: string): void {
    this.onerror?.({ message } as ErrorEvent);
  }

  of<T extends PageToWorker['type']>(type: T): Extract<PageToWorker, { type: T }>[] {
    return this.sent.filter((m): m is Extract<PageToWorker, { type: T }> => m.type === type);
  }

  /** The id of the latest request of `type` this worker got. */
  idOf(type: Extract<PageToWorker, { requestId: number }>['type']): number {
    const m = this.of(type).at(-1);
    if (!m) throw new Error(`no ${type} was sent`);
    return m.requestId;
  }
}

/** Use with vi.useFakeTimers(): the client's clock is the fake one. */
export function clientHarness() {
  const store = createAppStore();
  const workers: FakeWorker[] = [];
  const saved: Omit<ResumePoint, 'key'>[] = [];
  let workersStart = true;
  let stored: ResumePoint | null = null;
  const client = new TrainerClient({
    store,
    createWorker: () => {
      if (!workersStart) throw new Error('Worker is not defined');
      const w = new FakeWorker();
      workers.push(w);
      return w;
    },
    resumePoints: {
      save: async (_run, point) => {
        saved.push(point);
      },
      load: async () => stored,
      delete: async () => {
        stored = null;
      },
    },
    saveSequence: () => {},
    now: () => Date.now(),
  });
  return {
    client,
    store,
    workers,
    /** Trainer states the client stored (as IndexedDB would keep them). */
    saved,
    /** The worker in use now. */
    get worker(): FakeWorker {
      const w = workers.at(-1);
      if (!w) throw new Error('no worker was started');
      return w;
    },
    refuseWorkers(): void {
      workersStart = false;
    },
    setStoredState(p: ResumePoint | null): void {
      stored = p;
    },
    /** How many requests wait for a reply. */
    pending: () => client.connection.requests.size,
    /** Lets timers and promise callbacks run `ms` of fake time on. */
    advance: (ms = 0) => vi.advanceTimersByTimeAsync(ms),
    activeRun() {
      const s = store.getState();
      return s.runs.find((r) => r.id === s.activeRunId);
    },
  };
}

export function metrics(iter: number, reward = 0): WorkerToPage {
  return { type: 'metrics', iter, values: { reward_mean: reward } };
}
