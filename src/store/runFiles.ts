// "Save run" and "Open run…": a run, its latest batch and its inspected iterations to one file
// (runFile.ts) and back. An opened run is a new run marked recorded: its charts, teaching views and
// inspector show what was recorded, and nothing trains it. A refused file changes nothing.
import { useApp } from './appStore.ts';
import { downloadBlob } from './download.ts';
import { useInspection } from './inspection.ts';
import * as notices from './notices.ts';
import { RUN_FILE_MAX_BYTES, RunFileError, readRunFile, runFileText } from './runFile.ts';
import type { RunRecord } from './runs.ts';

/** A file name from the run's name: letters, digits and dashes, so every system keeps it as it is. */
export function runFileName(run: Pick<RunRecord, 'name'>, at = new Date()): string {
  const stem = run.name
    .normalize('NFKD')
    .replace(/[^\p{L}\p{N}]+/gu, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60);
  return `ppo-run-${stem || 'run'}-${at.toISOString().slice(0, 19).replace(/[:T]/g, '-')}.json`;
}

/** Downloads run `runId` as a run file and says its size; false when no such run exists. */
export function saveRunFile(runId: string): boolean {
  const s = useApp.getState();
  const run = s.runs.find((r) => r.id === runId);
  if (!run) return false;
  const traces = useInspection.getState().traces.filter((t) => t.runId === runId);
  const text = runFileText(run, s.batches[runId], traces);
  const blob = new Blob([text], { type: 'application/json' });
  const fileName = runFileName(run);
  downloadBlob(blob, fileName);
  s.setNotice({ tone: 'info', text: notices.runFileSaved(run.name, fileName, blob.size, run.metrics.length, traces.length) });
  return true;
}

/**
 * Opens a run file as a new recorded run, and says so in the notice bar; a refused file leaves the
 * page as it was. `message` is the notice's text (the no-WebGPU guide shows it inline).
 */
export async function openRunFile(file: Pick<File, 'name' | 'size' | 'text'>): Promise<{ run: RunRecord | null; message: string }> {
  const s = useApp.getState();
  try {
    if (file.size > RUN_FILE_MAX_BYTES) throw new RunFileError('too-large', 'file', `the file is over ${RUN_FILE_MAX_BYTES / 2 ** 20} MiB`);
    const rec = readRunFile(await file.text());
    const run = s.addRecordedRun(rec, file.name);
    const inspection = useInspection.getState();
    for (const t of rec.traces) inspection.pushTrace({ ...t, runId: run.id });
    const message = notices.runFileOpened(run.name, file.name, run.metrics.length, rec.savedAt);
    s.setNotice({ tone: 'info', text: message });
    return { run, message };
  } catch (e) {
    const message = notices.runFileRefused(file.name, e);
    s.setNotice({ tone: 'error', text: message });
    return { run: null, message };
  }
}
