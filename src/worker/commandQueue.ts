// Commands that touch the trainer run one at a time, in the order they came: each waits for the
// one before it, and one that fails is reported without holding up those after it.

/** Told of a command's failure, with the request it answered when it answered one. */
export type FailureReport = (error: unknown, requestId?: number) => void;

export class CommandQueue {
  private tail: Promise<void> = Promise.resolve();

  constructor(private readonly onFailure: FailureReport) {}

  /** Runs `op` after every command queued before it; resolves when it has been handled. */
  run(op: () => Promise<void>, requestId?: number): Promise<void> {
    const next = this.tail.then(async () => {
      try {
        await op();
      } catch (e) {
        this.onFailure(e, requestId);
      }
    });
    this.tail = next;
    return next;
  }
}
