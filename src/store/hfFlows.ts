// What the "Your own model" panel asks of the worker and of the browser's storage: open a picked
// folder (the File objects go to the worker, which reads them; nothing leaves the machine), keep
// it in this browser for a reload, open the kept copy again, sample from the model, train it with
// LoRA (its checkpoints kept as they come) and download the adapter, save the run as a file and
// open one again, forget it. A model lost with the GPU device is opened again on the new one from
// the kept copy, its last kept adapter and rows put back. Every failure lands in the HF stores as
// a message the panel shows; none touches the PPO run.
import type { StoreApi } from 'zustand';
import { t } from '../i18n/index.ts';
import type { HfGenerateRequest } from '../worker/protocol.ts';
import { hfTrainProblems, isHfTrainReward, type HfTrainSettings } from '../rl/hf/hfTrainSettings.ts';
import { useHf, type HfState, settingProblems } from './hfModel.ts';
import { type HfKeptOffer, type HfTrainCheckpoint, type HfTrainState, type RecordedFile, useHfTrain } from './hfTrain.ts';
import { comparedToKeep, forgetKeptAdapter, type KeptAdapterRecord, keepAdapter, readKeptAdapter, runBothLeft } from './hfAdapterKeep.ts';
import { adapterFromFiles, type AdapterFiles } from './adapterFiles.ts';
import { forgetKept, keepFolder, keptFiles, readKept } from './hfKeep.ts';
import type { PickedFolder } from './hfFolderFiles.ts';
import type { TrainerConnection } from './trainerConnection.ts';
import { fetchServedFile, tooLarge } from './fileChecks.ts';
import { HF_RUN_FILE_MAX_BYTES, HF_RUN_FILE_VERSIONS_READ, type HfRecordedRun, type HfRunTrace, hfRunFileText, otherModel, readHfRunFile, runModelOf } from './hfRunFile.ts';
import * as notices from './notices.ts';
import { SHIPPED_CHAT_MODEL } from '../model/hf/shippedModel.ts';
import { playgroundCheckpoint, playgroundModelFolder } from './playgroundModelFolder.ts';
import { OWN_MODEL_RECORDED_ID, OWN_MODEL_RUN_ID, useInspection } from './inspection.ts';

export interface HfFlowDeps {
  store: StoreApi<HfState>;
  train: StoreApi<HfTrainState>;
  /** The page's written reward function (the one in force; a link's waits for acceptance elsewhere). */
  rewardFunction: () => string;
  /** Saves a file the visitor downloads. */
  download: (blob: Blob, filename: string) => void;
  /** The trained adapter kept in this browser for a reload (hfAdapterKeep.ts). */
  adapterKeep: { save: typeof keepAdapter; read: typeof readKeptAdapter; forget: typeof forgetKeptAdapter };
  connection: () => TrainerConnection;
  keep: { save: typeof keepFolder; read: typeof readKept; files: typeof keptFiles; forget: typeof forgetKept };
  /** A seed per sample: a new one each Generate. */
  seed: () => number;
  /** The current task and its character model's checkpoint: 1 · SFT's kept one, else the one served under `baseUrl`. */
  playgroundModel: (baseUrl: string) => Promise<{ task: string; bytes: Uint8Array }>;
}

/** The inspector's traces of the last own-model run: gone with a fresh run, another adapter or another model. */
const dropOwnModelTraces = () => useInspection.getState().dropRun(OWN_MODEL_RUN_ID);

/** The own-model run's trace of iteration `iter` the inspector holds, as a run keeps it. */
function ownModelTraceOf(iter: number): HfRunTrace | undefined {
  const c = useInspection.getState().traces.find((x) => x.runId === OWN_MODEL_RUN_ID && x.trace.iter === iter);
  return c ? { trace: c.trace, prompts: c.prompts, tokenText: c.tokenText, ...(c.endedWithEos ? { endedWithEos: c.endedWithEos } : {}) } : undefined;
}

/** A kept or put-back run's trace in the inspector, as the live run's iteration of model `label`. */
const showOwnModelTrace = (t: HfRunTrace, label: string) => useInspection.getState().ownModelTraceReceived({ type: 'hfTrace', ...t }, label);

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** The offer of a kept adapter: its iterations, and what of a Run both under way is left. */
function keptOfferOf(record: KeptAdapterRecord): HfKeptOffer {
  const left = runBothLeft(record);
  return {
    label: record.label,
    iterations: record.iterations,
    ...(left ? { runBoth: { arm: left.arm, arms: left.arms.length, iterations: left.iterations } } : {}),
  };
}

export class HfFlows {
  private restored = false;
  /** Writes of the kept adapter, one after another (a checkpoint never lands after a later one). */
  private keeping: Promise<void> = Promise.resolve();
  /** The arms of the Run both in progress (kept with its checkpoints, so a reload can go on with it); null otherwise. */
  private runBothArms: readonly HfTrainSettings[] | null = null;

  constructor(private readonly deps: HfFlowDeps) {
    deps.train.subscribe((now, before) => {
      if (now.checkpoint && now.checkpoint !== before.checkpoint) this.keepCheckpoint(now.checkpoint);
    });
    deps.store.subscribe((now, before) => {
      if (now.recovering && now.recovering !== before.recovering) void this.recoverLostModel(now.recovering);
    });
  }

  private get s(): HfState {
    return this.deps.store.getState();
  }

  private get tr(): HfTrainState {
    return this.deps.train.getState();
  }

  /** Sends the folder to the worker; true when the model opened. */
  private async openFiles(folder: PickedFolder): Promise<boolean> {
    this.s.loadStarted(folder.label);
    try {
      const reply = await this.deps.connection().request('hfOpen', { label: folder.label, files: folder.files });
      this.s.openReplied(folder.label, reply);
      const opened = reply.refusal === undefined && reply.model !== undefined;
      if (opened) {
        this.tr.modelChanged();
        useInspection.getState().ownModelOpened(folder.label);
        await this.offerKeptAdapter(folder.label);
        await this.putRecordedOnModel();
      }
      return opened;
    } catch (e) {
      this.s.openFailed(folder.label, message(e));
      return false;
    }
  }

  /** A folder the visitor picked or dropped: opened, then kept in this browser in place of any kept before; true when it opened. */
  async openPicked(folder: PickedFolder): Promise<boolean> {
    if (folder.files.length === 0) {
      this.s.openFailed(folder.label, t('notices:hf.emptyFolder'));
      return false;
    }
    if (!(await this.openFiles(folder))) return false;
    try {
      this.s.setKept(await this.deps.keep.save(folder.label, folder.files));
    } catch (e) {
      this.s.setKept(null, message(e));
    }
    return true;
  }

  /**
   * The small chat model shipped with the page (public/models/chat-arithmetic/), fetched from the
   * page's own origin and opened as a picked folder would be (and kept the same way for a reload).
   */
  async openShipped(baseUrl: string): Promise<void> {
    const { label, path, files } = SHIPPED_CHAT_MODEL;
    let picked: File[];
    try {
      picked = await Promise.all(
        files.map(async (name) => {
          const res = await fetch(`${baseUrl}${path}${name}`);
          if (!res.ok) throw new Error(t('notices:hf.shippedMissing', { file: name, status: res.status }));
          return new File([await res.blob()], name);
        }),
      );
    } catch (e) {
      this.s.openFailed(label, message(e));
      return;
    }
    await this.openPicked({ label, files: picked });
  }

  /**
   * The playground's character model of the current task as the GPT-2 folder it is
   * (playgroundModelFolder.ts), opened and kept as a picked folder would be.
   */
  async openPlaygroundModel(baseUrl: string): Promise<void> {
    let folder: PickedFolder;
    let task: string;
    try {
      const model = await this.deps.playgroundModel(baseUrl);
      task = model.task;
      folder = playgroundModelFolder(task, model.bytes);
    } catch (e) {
      this.s.openFailed(t('notices:hf.playgroundModelLabel'), message(e));
      return;
    }
    // The chat task needs a chat template this model has not: training is offered on its own task instead.
    if ((await this.openPicked(folder)) && this.tr.settings.reward === 'chat-arithmetic' && isHfTrainReward(task)) this.tr.setSettings({ reward: task });
  }

  /** The copy kept in this browser, opened again. */
  async openKept(): Promise<void> {
    const kept = this.s.kept;
    if (!kept) return;
    let files: File[];
    try {
      files = await this.deps.keep.files();
    } catch (e) {
      this.s.setKept(null, message(e));
      return;
    }
    await this.openFiles({ label: kept.label, files });
  }

  /** On page load: what is kept, offered (not opened: the visitor chooses when to spend the memory). */
  async restore(): Promise<void> {
    if (this.restored) return;
    this.restored = true;
    const kept = await this.deps.keep.read();
    if (kept) this.s.setKept(kept);
  }

  async generate(): Promise<void> {
    const s = this.s;
    if (!s.model || s.generating || settingProblems(s.settings, s.model).length > 0) return;
    const { prompt, chat, greedy, temperature, topP, maxNewTokens } = s.settings;
    const req: HfGenerateRequest = { prompt, chat: chat && s.model.hasChatTemplate, greedy, temperature, topP, maxNewTokens, seed: this.deps.seed() };
    s.generateStarted();
    try {
      this.s.generateReplied(await this.deps.connection().request('hfGenerate', req));
    } catch (e) {
      this.s.generateFailed(message(e));
    }
  }

  /** An adapter of the model just opened, kept in this browser by an earlier visit: offered, not loaded. */
  private async offerKeptAdapter(label: string): Promise<void> {
    const kept = await this.deps.adapterKeep.read();
    this.tr.setKeptOffer(kept && kept.record.label === label ? keptOfferOf(kept.record) : null);
  }

  /**
   * Trains the open model with LoRA and the panel's settings (fresh adapters, or `resume`: on from
   * the adapter it holds); rows and evaluations arrive as the worker posts them; the adapter is
   * then kept for a reload. True when every iteration ran (not stopped, refused or lost).
   */
  async train(resume = false): Promise<boolean> {
    const model = this.s.model;
    const tr = this.tr;
    if (!model || tr.running || hfTrainProblems(tr.settings, model).length > 0 || (resume && !tr.trained)) return false;
    tr.started(resume, model.label);
    if (!resume) dropOwnModelTraces();
    let ran = false;
    try {
      const reply = await this.deps.connection().request('hfTrain', {
        settings: tr.settings,
        rewardFunction: this.deps.rewardFunction(),
        ...(resume ? { resume: { fromIter: tr.iterationsDone } } : {}),
      });
      // Lost with the GPU device mid-run: the last checkpoint comes back with the model (recoverLostModel).
      if (this.s.model === null) return false;
      this.tr.finished(reply);
      ran = reply.iterations > 0;
    } catch (e) {
      this.tr.failed(message(e));
    }
    if (ran) await this.keepTrained(model.label);
    const { ended, problem } = this.tr;
    return ended !== null && !ended.stopped && problem === null;
  }

  /**
   * "Run both": a fresh run of each arm's settings in turn on the open model, each arm's curves
   * kept beside the next's (a fresh Start moves them to `compared`). Stop, a refusal or a lost
   * device ends the sequence; the panel keeps the last arm's settings.
   */
  async trainBoth(arms: readonly HfTrainSettings[]): Promise<void> {
    if (this.tr.running || this.tr.runBoth) return;
    await this.runArms(arms, 0, null);
  }

  /**
   * A Run both kept in this browser when the page went (a reload mid-sequence): its adapter put
   * back with its rows and the earlier runs' curves, the arm it is of trained on to that arm's
   * iterations (Continue, exactly as if never stopped), then the arms after it, fresh.
   */
  async continueRunBoth(): Promise<void> {
    const kept = await this.deps.adapterKeep.read();
    const left = kept ? runBothLeft(kept.record) : null;
    if (!kept || !left || this.tr.running || this.tr.runBoth) return;
    await this.continueKept();
    if (!this.tr.trained || this.tr.adapter?.source !== 'kept' || this.tr.iterationsDone !== kept.record.iterations) return;
    await this.runArms(left.arms, left.arm, left.iterations);
  }

  /** Arms `from` on, in turn: arm `from` continued for `continueFor` iterations (0: already done), or fresh when null; each later arm fresh. */
  private async runArms(arms: readonly HfTrainSettings[], from: number, continueFor: number | null): Promise<void> {
    this.runBothArms = arms;
    try {
      for (let arm = from; arm < arms.length; arm++) {
        const resume = arm === from && continueFor !== null;
        if (resume && continueFor === 0) continue;
        this.tr.setRunBoth({ arm, arms: arms.length });
        this.tr.setSettings(resume ? { ...arms[arm], iterations: continueFor } : arms[arm]);
        if (!(await this.train(resume))) break;
      }
    } finally {
      this.tr.setRunBoth(null);
      this.runBothArms = null;
    }
  }

  /** The adapter just trained, kept in this browser with its run so a reload can continue it. */
  private async keepTrained(label: string): Promise<void> {
    await this.keepWith(async () => {
      const reply = await this.deps.connection().request('hfExportAdapter', { trainingState: true });
      if (reply.config === undefined || reply.weights === undefined) throw new Error(reply.refusal ?? '');
      await this.deps.adapterKeep.save(this.keptRecord(label, this.tr.iterationsDone), reply.config, reply.weights, reply.state);
    });
  }

  /**
   * A checkpoint of the run in flight, kept with the rows up to its iteration: a reload, or a lost
   * device, continues from there.
   */
  private keepCheckpoint(checkpoint: HfTrainCheckpoint): void {
    // The store lets go of the bytes once they are written (not from inside its own listener).
    const release = () => {
      if (this.tr.checkpoint === checkpoint) this.tr.checkpointTaken();
    };
    const model = this.s.model;
    if (!model) return void queueMicrotask(release);
    const record = this.keptRecord(model.label, checkpoint.iter);
    void this.keepWith(() => this.deps.adapterKeep.save(record, checkpoint.config, checkpoint.weights, checkpoint.state)).then(release);
  }

  /** What is kept beside an adapter trained to iteration `iterations`: the run's settings, its rows up to there and its evaluations. */
  private keptRecord(label: string, iterations: number): KeptAdapterRecord {
    const tr = this.tr;
    const last = ownModelTraceOf(iterations);
    const compared = tr.compared.filter((c) => c.model === label);
    // A Run both goes on after a reload unless it ended here: stopped, or refused.
    const arms = tr.ended?.stopped || tr.problem !== null ? null : this.runBothArms;
    return {
      label,
      iterations,
      settings: tr.settings,
      rows: tr.rows.filter((r) => r.iter <= iterations),
      evals: tr.evals,
      savedAt: Date.now(),
      ...(last ? { lastTrace: last } : {}),
      ...(compared.length > 0 ? { compared: comparedToKeep(compared) } : {}),
      ...(tr.runBoth && arms ? { runBoth: { arm: tr.runBoth.arm, arms: [...arms] } } : {}),
    };
  }

  /** One write of the kept adapter after the ones before it; its failure is the panel's keep problem. */
  private keepWith(write: () => Promise<void>): Promise<void> {
    this.keeping = this.keeping.then(write).then(
      () => this.tr.setKeepProblem(null),
      (e) => this.tr.setKeepProblem(message(e)),
    );
    return this.keeping;
  }

  /**
   * After a lost GPU device: the model that went with it, opened again from this browser's copy on
   * the new device, and the adapter last kept for it (a checkpoint of the run in flight, or the
   * last run's) put back with its rows. Continue trains on from there.
   */
  private async recoverLostModel(label: string): Promise<void> {
    let recovered: { label: string; iterations: number | null } | null = null;
    try {
      await this.keeping; // the last checkpoint written first
      await this.openKept();
      if (this.s.model?.label !== label) return;
      const kept = await this.deps.adapterKeep.read();
      if (kept && kept.record.label === label) {
        await this.continueKept();
        // A Run both the loss cut short is offered to go on, as after a reload.
        if (this.tr.trained && runBothLeft(kept.record)) this.tr.setKeptOffer(keptOfferOf(kept.record));
      }
      recovered = { label, iterations: this.tr.trained ? this.tr.iterationsDone : null };
    } finally {
      this.s.recoveryEnded(recovered);
    }
  }

  /** The kept adapter put back on the model with its run's rows: Continue trains on from it. */
  async continueKept(): Promise<void> {
    const kept = await this.deps.adapterKeep.read();
    if (!kept || !this.s.model || kept.record.label !== this.s.model.label) {
      this.tr.setKeptOffer(null);
      return;
    }
    await this.loadAdapter({ config: kept.config, weights: kept.weights, ...(kept.state ? { state: kept.state } : {}) }, 'kept', kept.record);
  }

  /** A PEFT adapter the visitor picked (the page's zip, or its two files), put on the model. */
  async loadAdapterFiles(files: readonly File[]): Promise<void> {
    let picked: AdapterFiles;
    try {
      picked = await adapterFromFiles(files);
    } catch (e) {
      this.tr.setLoadProblem(message(e));
      return;
    }
    await this.loadAdapter(picked, 'loaded');
  }

  /** Puts an adapter on the open model; true when the worker took it. */
  private async loadAdapter(
    files: AdapterFiles & { state?: Uint8Array },
    source: 'loaded' | 'kept' | 'recorded',
    kept?: Pick<KeptAdapterRecord, 'iterations' | 'rows' | 'evals' | 'settings' | 'compared'> & { lastTrace?: HfRunTrace },
    file?: RecordedFile,
  ): Promise<boolean> {
    if (!this.s.model || this.tr.running) return false;
    try {
      // A copy goes to the worker: the bytes sent are transferred, and a recorded run keeps its own.
      const sent = { ...files, weights: files.weights.slice(), ...(files.state ? { state: files.state.slice() } : {}) };
      const reply = await this.deps.connection().request('hfLoadAdapter', sent, [sent.weights.buffer as ArrayBuffer]);
      if (reply.refusal !== undefined || !reply.adapter) {
        this.tr.setLoadProblem(reply.refusal ?? '');
        return false;
      }
      this.tr.adapterLoaded(this.s.model.label, reply.adapter, source, kept, files.state !== undefined, file);
      // The run kept in this browser goes on: its traces up to the adapter's iteration stay (a lost device's replay brings the rest).
      if (source === 'kept' && kept) useInspection.getState().truncateRun(OWN_MODEL_RUN_ID, kept.iterations + 1);
      else dropOwnModelTraces();
      if (kept?.lastTrace && this.s.model) showOwnModelTrace(kept.lastTrace, this.s.model.label);
      return true;
    } catch (e) {
      this.tr.setLoadProblem(message(e));
      return false;
    }
  }

  /**
   * Save the run: the open model's name and shape, the settings, every row and evaluation, and the
   * adapter with its training state, as one JSON file (hfRunFile.ts).
   */
  async saveRun(): Promise<void> {
    const model = this.s.model;
    const tr = this.tr;
    if (!model || !tr.trained || tr.running || tr.rows.length === 0) return;
    try {
      const reply = await this.deps.connection().request('hfExportAdapter', { trainingState: true });
      if (reply.refusal !== undefined || reply.config === undefined || reply.weights === undefined) throw new Error(reply.refusal ?? '');
      const { rows, evals, settings, iterationsDone } = this.tr;
      const last = ownModelTraceOf(iterationsDone);
      const text = hfRunFileText({
        savedAt: new Date().toISOString(),
        model: runModelOf(model),
        settings,
        iterations: iterationsDone,
        rows,
        evals,
        adapter: { config: reply.config, weights: reply.weights, ...(reply.state ? { state: reply.state } : {}) },
        ...(last ? { lastTrace: last } : {}),
      });
      const fileName = `${adapterFolderName(model.label)}-run-${iterationsDone}.json`;
      const blob = new Blob([text], { type: 'application/json' });
      this.deps.download(blob, fileName);
      this.tr.setRunFileNotice({ tone: 'info', text: notices.hfRunFileSaved(fileName, blob.size, iterationsDone, reply.state !== undefined) });
    } catch (e) {
      this.tr.setRunFileNotice({ tone: 'error', text: t('notices:hf.train.runNotSaved', { problem: message(e) }) });
    }
  }

  /**
   * Open a saved run: checked whole (a refusal names the field; nothing changes), then shown as
   * recorded; on its own model (open now or later) its adapter and training state go on the model
   * and its rows become the panel's, so Continue trains on from its last iteration. Whether the
   * file was opened (a refusal is the panel's notice).
   */
  async openRunFile(file: Pick<File, 'name' | 'size' | 'text'>): Promise<boolean> {
    return this.showRecorded(file.name, async () => {
      if (file.size > HF_RUN_FILE_MAX_BYTES) throw tooLarge(HF_RUN_FILE_MAX_BYTES);
      return file.text();
    });
  }

  /** A run file the page's own site serves (a "Your own model" preset's recorded run: presetResults.ts), opened as a picked one. */
  async openServedRunFile(path: string): Promise<boolean> {
    return this.showRecorded(path.slice(path.lastIndexOf('/') + 1), () => fetchServedFile(path, HF_RUN_FILE_MAX_BYTES));
  }

  private async showRecorded(fileName: string, read: () => Promise<string>): Promise<boolean> {
    if (this.tr.running) {
      this.tr.setRunFileNotice({ tone: 'error', text: t('notices:hf.train.runBusy', { fileName }) });
      return false;
    }
    let run: HfRecordedRun;
    try {
      run = readHfRunFile(await read());
    } catch (e) {
      this.tr.setRunFileNotice({ tone: 'error', text: notices.hfRunFileRefused(fileName, e, HF_RUN_FILE_VERSIONS_READ, HF_RUN_FILE_MAX_BYTES) });
      return false;
    }
    this.tr.recordedOpened({ fileName, savedAt: run.savedAt }, run);
    this.tr.setRunFileNotice(null);
    this.s.show(true);
    await this.putRecordedOnModel();
    return true;
  }

  /**
   * The opened run file's adapter on the open model, when it is the run's model. An adapter the
   * model already holds is not replaced unasked (`replace`: the visitor chose to): the run stays
   * shown as recorded and offers to.
   */
  private async putRecordedOnModel(replace = false): Promise<void> {
    const rec = this.tr.recorded;
    const model = this.s.model;
    if (!rec || !model || otherModel(rec.run.model, model) !== null || (this.tr.trained && !replace)) return;
    const { run, fileName, savedAt } = rec;
    const put = await this.loadAdapter(run.adapter, 'recorded', run, { fileName, savedAt });
    if (!put) return;
    this.tr.recordedClosed();
    this.tr.setRunFileNotice({ tone: 'info', text: notices.hfRunFileOpened(fileName, savedAt, run.iterations) });
  }

  /** The recorded run's adapter on the open model in place of the one it holds. */
  async putRecordedAdapter(): Promise<void> {
    await this.putRecordedOnModel(true);
  }

  /** Response `row` of the recorded run's last iteration in the Inspect tab (the file's own trace). */
  inspectRecorded(row: number): void {
    const rec = this.tr.recorded;
    if (!rec?.run.lastTrace) return;
    // named by the file alone (a link's ?run= path is the site's, not the file's name)
    useInspection.getState().recordedTraceShown(rec.run.lastTrace, rec.run.model.label, rec.fileName.slice(rec.fileName.lastIndexOf('/') + 1));
    useInspection.getState().focusOn({ runId: OWN_MODEL_RECORDED_ID, iter: rec.run.lastTrace.trace.iter, row });
  }

  /** Closes a run file shown as recorded (its model never opened). */
  closeRecorded(): void {
    this.tr.recordedClosed();
    this.tr.setRunFileNotice(null);
  }

  /** Ends the training run before its next iteration. */
  stopTraining(): void {
    if (!this.tr.running) return;
    this.tr.stopAsked();
    this.deps.connection().quietSend({ type: 'hfTrainStop' });
  }

  /** The trained adapter as a zip of PEFT's two files, in a folder named after the model. */
  async downloadAdapter(): Promise<void> {
    const model = this.s.model;
    if (!model || !this.tr.trained) return;
    this.tr.setDownloadProblem(null);
    try {
      const reply = await this.deps.connection().request('hfExportAdapter', {});
      if (reply.refusal !== undefined || reply.config === undefined || reply.weights === undefined) {
        this.tr.setDownloadProblem(reply.refusal ?? '');
        return;
      }
      const { zipJob } = await import('../export/zip.ts');
      const name = `${adapterFolderName(model.label)}-lora`;
      const zip = zipJob(name, [
        { path: 'adapter_config.json', data: new TextEncoder().encode(reply.config), mode: 0o644 },
        { path: 'adapter_model.safetensors', data: reply.weights, mode: 0o644 },
      ]);
      this.deps.download(new Blob([zip as BlobPart], { type: 'application/zip' }), `${name}.zip`);
    } catch (e) {
      this.tr.setDownloadProblem(message(e));
    }
  }

  /** Frees the model in the worker and deletes the kept copy. */
  async forget(): Promise<void> {
    this.deps.connection().quietSend({ type: 'hfClose' });
    this.s.forgotten();
    this.tr.modelChanged();
    dropOwnModelTraces();
    try {
      await this.keeping; // a checkpoint on its way lands before it is forgotten, not after
      await this.deps.adapterKeep.forget();
    } catch {
      // nothing kept, or no private file system: nothing to forget
    }
    try {
      await this.deps.keep.forget();
    } catch (e) {
      this.s.setKept(null, message(e));
    }
  }
}

/** A folder name from a model's label: letters, digits, dot, dash and underscore kept. */
export function adapterFolderName(label: string): string {
  const name = label.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[-.]+|-+$/g, '');
  return name === '' ? 'model' : name;
}

let flows: HfFlows | null = null;

/** The page's flows, on the page's one trainer connection (loaded with the panel's first use). */
export async function hfFlows(): Promise<HfFlows> {
  if (!flows) {
    const { trainer } = await import('./trainerClient.ts');
    const [{ useApp }, { downloadBlob }, { useSft }] = await Promise.all([import('./appStore.ts'), import('./download.ts'), import('./sftState.ts')]);
    flows = new HfFlows({
      store: useHf,
      train: useHfTrain,
      rewardFunction: () => useApp.getState().config.rewardFunction,
      download: downloadBlob,
      adapterKeep: { save: keepAdapter, read: readKeptAdapter, forget: forgetKeptAdapter },
      connection: () => trainer.connection,
      keep: { save: keepFolder, read: readKept, files: keptFiles, forget: forgetKept },
      seed: () => Math.floor(Math.random() * 0x1_0000_0000),
      playgroundModel: async (baseUrl) => {
        const task = useApp.getState().config.task;
        return { task, bytes: await playgroundCheckpoint(baseUrl, task, useSft.getState().models[task]) };
      },
    });
  }
  return flows;
}
