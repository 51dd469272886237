// What the page's "1 · SFT" stage does: train an SFT model of the knobs' size in the tab (the
// worker's trainSft), cancel it, keep the result (IndexedDB, then the actor of every trainer the
// page starts for that task), download it, load one from a file, or go back to the shipped model.
import { t } from '../i18n/index.ts';
import { parseCheckpoint } from '../model/checkpoint.ts';
import { useApp } from './appStore.ts';
import { checkActorFile } from './checkpoints.ts';
import { downloadBlob } from './download.ts';
import { dimsOf, SHIPPED_DIMS, type ActorModel } from './modelSize.ts';
import { deleteSftModel, loadSftModels, saveSftModel } from './sftModels.ts';
import { timingKey, useSft, type KeptSftModel } from './sftState.ts';
import { trainer } from './trainerClient.ts';

/** The model the next Start trains for the current task. */
export function actorModel(task: string, models: Record<string, KeptSftModel>): ActorModel {
  const m = models[task];
  return m ? { origin: m.origin, dims: m.dims } : { origin: 'shipped', dims: SHIPPED_DIMS };
}

/** Stops what trains: the SFT model replaces the actor, so the run in progress ends (it stays in the list). */
async function endActiveRun(): Promise<void> {
  const s = useApp.getState();
  if (s.runState === 'running') await trainer.pause();
  if (useApp.getState().activeRunId) useApp.getState().endRun();
}

async function keep(m: KeptSftModel): Promise<void> {
  useSft.getState().setModel(m);
  try {
    await saveSftModel(m);
  } catch (e) {
    useSft.getState().setProblem(t('notices:sft.notKept', { error: e instanceof Error ? e.message : String(e) }));
  }
}

/** SFT at the knobs' size on the current task (`phaseSteps` caps every phase: a reduced run). */
export async function trainSftModel(phaseSteps?: number): Promise<void> {
  const { config } = useApp.getState();
  const dims = dimsOf(config);
  const sft = useSft.getState();
  if (sft.run?.status === 'running') return;
  sft.setProblem(null);
  await endActiveRun();
  sft.setRun({ task: config.task, dims, status: 'running', phase: 0, phases: 0, doneSteps: 0, totalSteps: 0, seconds: 0, loss: [], evals: [] });
  const reply = await trainer.models.trainSft(dims, phaseSteps);
  if ('failed' in reply) {
    useSft.getState().patchRun({ status: 'failed', message: reply.failed });
    return;
  }
  if (reply.cancelled || !reply.bytes || !reply.meta) {
    useSft.getState().patchRun({ status: 'cancelled', seconds: reply.seconds });
    return;
  }
  const m = reply.meta;
  useSft.getState().patchRun({ status: 'done', seconds: reply.seconds });
  await keep({ task: m.task, origin: 'tab', dims, meta: m, bytes: reply.bytes, savedAt: Date.now() });
  // The worker took the model already; handing it over again also prepares the next trainer from it.
  trainer.models.setActor(m.task, reply.bytes);
}

export function cancelSftModel(): void {
  if (useSft.getState().run?.status === 'running') trainer.models.cancelSft();
}

/** Back to the shipped checkpoint: the kept model goes, and the knobs say 2 × 2 × 64 again. */
export async function switchToShippedModel(): Promise<void> {
  const { config } = useApp.getState();
  await endActiveRun();
  useSft.getState().dropModel(config.task);
  useSft.getState().setProblem(null);
  await deleteSftModel(config.task).catch(() => undefined);
  trainer.models.setActor(config.task, null);
  useApp.getState().applyConfig({ ...useApp.getState().config, ...SHIPPED_DIMS });
}

export function sftFileName(m: KeptSftModel): string {
  return `sft-${m.task}-${m.dims.nLayer}x${m.dims.nHead}x${m.dims.dModel}${m.meta ? `-seed${m.meta.seed}` : ''}.safetensors`;
}

export function downloadSftModel(): void {
  const m = useSft.getState().models[useApp.getState().config.task];
  if (m) downloadBlob(new Blob([m.bytes], { type: 'application/octet-stream' }), sftFileName(m));
}

/**
 * The task's model of 1 · SFT (the kept one, else the shipped checkpoint under `baseUrl`) as the
 * Hugging Face GPT-2 folder it is, zipped: "Your own model" opens it, and it is written in the
 * layout transformers reads.
 */
export async function downloadSftModelAsGpt2(baseUrl: string): Promise<void> {
  const task = useApp.getState().config.task;
  try {
    // Loaded on the download: the folder's writer and the zip are not part of the first load.
    const [{ playgroundCheckpoint, playgroundFolderLabel }, { checkpointFolderFiles }, { zipJob }] = await Promise.all([
      import('./playgroundModelFolder.ts'),
      import('../model/hf/charModelFolder.ts'),
      import('../export/zip.ts'),
    ]);
    const bytes = await playgroundCheckpoint(baseUrl, task, useSft.getState().models[task]);
    const label = playgroundFolderLabel(task);
    const files = [...checkpointFolderFiles(bytes)].map(([path, data]) => ({ path, data, mode: 0o644 }));
    downloadBlob(new Blob([zipJob(label, files).slice()], { type: 'application/zip' }), `${label}.zip`);
  } catch (e) {
    useSft.getState().setProblem(t('notices:sft.gpt2Failed', { error: e instanceof Error ? e.message : String(e) }));
  }
}

/**
 * A .safetensors file as the task's SFT model: checked first (a bad file is refused inline with its
 * reason and changes nothing), then kept and handed to the worker; the knobs take its size.
 */
export async function loadSftFile(file: File): Promise<void> {
  const { config } = useApp.getState();
  const buf = await file.arrayBuffer();
  const problem = checkActorFile(new Uint8Array(buf), config.task);
  if (problem) {
    useSft.getState().setProblem(t('notices:sft.fileRefused', { fileName: file.name, problem }));
    return;
  }
  const { nLayer, nHead, dModel } = parseCheckpoint(new Uint8Array(buf)).config;
  const dims = { nLayer, nHead, dModel };
  useSft.getState().setProblem(null);
  await endActiveRun();
  await keep({ task: config.task, origin: 'file', dims, meta: null, fileName: file.name, bytes: buf, savedAt: Date.now() });
  trainer.models.setActor(config.task, buf);
  useApp.getState().applyConfig({ ...useApp.getState().config, ...dims });
}

/**
 * An actor loaded through the Checkpoints card (already checked and in the worker) is the task's
 * SFT model from now on: kept, named in the header, and its size in the knobs.
 */
export async function rememberLoadedActor(file: File): Promise<void> {
  const { config } = useApp.getState();
  const bytes = await file.arrayBuffer();
  const { nLayer, nHead, dModel } = parseCheckpoint(new Uint8Array(bytes)).config;
  const dims = { nLayer, nHead, dModel };
  await keep({ task: config.task, origin: 'file', dims, meta: null, fileName: file.name, bytes, savedAt: Date.now() });
  useApp.getState().applyConfig({ ...useApp.getState().config, ...dims });
}

/** After a reload: the kept models back in the store, and in the worker (withActors sends them to each new one). */
export async function restoreSftModels(): Promise<void> {
  try {
    const { models, dropped } = await loadSftModels();
    for (const m of models) {
      useSft.getState().setModel(m);
      trainer.models.setActorQuietly(m.task, m.bytes);
    }
    if (dropped.length > 0) useSft.getState().setProblem(t('notices:sft.dropped', { which: dropped.map((d) => `${d.task}: ${d.why}`).join(t('notices:sft.droppedJoin')) }));
  } catch (e) {
    useSft.getState().setProblem(t('notices:sft.unreadable', { error: e instanceof Error ? e.message : String(e) }));
  }
}

/** Measures the step time at the knobs' size once per task and size (for "about N s on this GPU"). */
export async function measureSftStep(): Promise<void> {
  const { config } = useApp.getState();
  const dims = dimsOf(config);
  const key = timingKey(config.task, dims);
  if (useSft.getState().timings[key] !== undefined || timingInFlight.has(key)) return;
  timingInFlight.add(key);
  try {
    // Null while no worker runs yet: the notice asks again a few seconds later.
    const t = await trainer.models.timeSft(dims);
    if (t !== null) useSft.getState().setTiming(key, { secondsPerStep: t.secondsPerStep, recipeSteps: t.recipeSteps });
  } finally {
    timingInFlight.delete(key);
  }
}

const timingInFlight = new Set<string>();

/**
 * A reduced SFT run for tests and demos on slow adapters: `localStorage['ppo-sft-phase-steps']`
 * caps every phase (1–10000; anything else is ignored). Never from a link.
 */
export function sftPhaseStepCap(): number | undefined {
  try {
    const raw = typeof localStorage === 'undefined' ? null : localStorage.getItem('ppo-sft-phase-steps');
    const n = raw === null ? Number.NaN : Number(raw);
    return Number.isInteger(n) && n >= 1 && n <= 10_000 ? n : undefined;
  } catch {
    return undefined;
  }
}
