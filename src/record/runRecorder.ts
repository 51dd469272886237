// One run as the page's charts and teaching views would hold it, built from the worker's own
// protocol messages: the points of every `metrics` and `eval` message, the latest `samples` and
// `ratios` (the batch the teaching views show), and each captured `trace`. The same shapes the
// page's store keeps (runsSlice, batches.ts, inspection.ts), written as a run file (runFile.ts).
import type { PpoConfig } from '../rl/config.ts';
import type { WorkerToPage } from '../worker/protocol.ts';
import type { RunBatch } from '../store/batches.ts';
import type { CapturedTrace } from '../store/inspection.ts';
import { runFileText } from '../store/runFile.ts';
import type { EvalPoint, MetricPoint, RunRecord } from '../store/runs.ts';

/** The id the recorder gives its one run; the page gives the run its own id when it opens the file. */
const RECORDED_RUN_ID = 'recorded';

export interface RecordedRunMeta {
  name: string;
  config: PpoConfig;
  /** The preset (and its budget) the run trains. */
  preset: string;
  budget: number;
  backend: RunRecord['backend'];
}

export class RunRecorder {
  readonly metrics: MetricPoint[] = [];
  readonly evals: EvalPoint[] = [];
  private batch: RunBatch = { samples: null, ratios: null };
  readonly traces: CapturedTrace[] = [];

  /** Takes one worker message; those that are not a run's data are ignored. */
  receive(msg: WorkerToPage): void {
    switch (msg.type) {
      case 'metrics':
        this.metrics.push({ iter: msg.iter, values: { ...msg.values } });
        break;
      case 'eval':
        this.evals.push({ iter: msg.iter, values: { ...msg.values }, prompts: msg.prompts, seconds: msg.seconds });
        break;
      case 'samples':
        this.batch = { ...this.batch, samples: { iter: msg.iter, rows: msg.rows } };
        break;
      case 'ratios':
        if (!msg.clip) throw new Error(`iteration ${msg.iter}: ratios without the clip settings they were trained with`);
        this.batch = {
          ...this.batch,
          ratios: {
            iter: msg.iter,
            ratios: msg.ratios,
            advantages: msg.advantages,
            ...(msg.seqRatios ? { seqRatios: msg.seqRatios } : {}),
            ...(msg.seqAdvantages ? { seqAdvantages: msg.seqAdvantages } : {}),
            clip: { ...msg.clip },
          },
        };
        break;
      case 'trace': {
        const { trace, prompts, tokenText } = msg;
        // The store's own check (inspection.ts traceReceived): a trace whose arrays disagree with its shape is not kept.
        if (prompts.length !== trace.B || tokenText.length !== trace.B * trace.A) throw new Error(`iteration ${msg.iter}: a trace whose prompts or tokens disagree with its shape`);
        this.traces.push({ runId: RECORDED_RUN_ID, trace, prompts, tokenText });
        break;
      }
      default:
        break;
    }
  }

  /** The run file of everything received, as the page writes one (runFile.ts). */
  fileText(meta: RecordedRunMeta, savedAt = new Date()): string {
    const run: RunRecord = {
      id: RECORDED_RUN_ID,
      name: meta.name,
      color: '',
      visible: true,
      config: meta.config,
      backend: meta.backend,
      createdAt: savedAt.getTime(),
      metrics: this.metrics,
      evals: this.evals,
      budget: meta.budget,
      preset: meta.preset,
    };
    const batch = this.batch.samples || this.batch.ratios ? this.batch : null;
    return runFileText(run, batch, this.traces, { savedAt });
  }
}
