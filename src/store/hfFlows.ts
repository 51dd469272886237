// What the "Your own model" panel asks of the worker and of the browser's storage: open a picked
// folder (the File objects go to the worker, which reads them; nothing leaves the machine), keep
// it in this browser for a reload, open the kept copy again, sample from the model, forget it.
// Every failure lands in the HF store as a message the panel shows; none touches the PPO run.
import type { StoreApi } from 'zustand';
import { t } from '../i18n/index.ts';
import type { HfGenerateRequest } from '../worker/protocol.ts';
import { useHf, type HfState, settingProblems } from './hfModel.ts';
import { forgetKept, keepFolder, keptFiles, readKept } from './hfKeep.ts';
import type { PickedFolder } from './hfFolderFiles.ts';
import type { TrainerConnection } from './trainerConnection.ts';

export interface HfFlowDeps {
  store: StoreApi<HfState>;
  connection: () => TrainerConnection;
  keep: { save: typeof keepFolder; read: typeof readKept; files: typeof keptFiles; forget: typeof forgetKept };
  /** A seed per sample: a new one each Generate. */
  seed: () => number;
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

export class HfFlows {
  private restored = false;

  constructor(private readonly deps: HfFlowDeps) {}

  private get s(): HfState {
    return this.deps.store.getState();
  }

  /** Sends the folder to the worker; true when the model opened. */
  private async openFiles(folder: PickedFolder): Promise<boolean> {
    this.s.loadStarted(folder.label);
    try {
      const reply = await this.deps.connection().request('hfOpen', { label: folder.label, files: folder.files });
      this.s.openReplied(folder.label, reply);
      return reply.refusal === undefined && reply.model !== undefined;
    } catch (e) {
      this.s.openFailed(folder.label, message(e));
      return false;
    }
  }

  /** A folder the visitor picked or dropped: opened, then kept in this browser in place of any kept before. */
  async openPicked(folder: PickedFolder): Promise<void> {
    if (folder.files.length === 0) {
      this.s.openFailed(folder.label, t('notices:hf.emptyFolder'));
      return;
    }
    if (!(await this.openFiles(folder))) return;
    try {
      this.s.setKept(await this.deps.keep.save(folder.label, folder.files));
    } catch (e) {
      this.s.setKept(null, message(e));
    }
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

  /** Frees the model in the worker and deletes the kept copy. */
  async forget(): Promise<void> {
    this.deps.connection().quietSend({ type: 'hfClose' });
    this.s.forgotten();
    try {
      await this.deps.keep.forget();
    } catch (e) {
      this.s.setKept(null, message(e));
    }
  }
}

let flows: HfFlows | null = null;

/** The page's flows, on the page's one trainer connection (loaded with the panel's first use). */
export async function hfFlows(): Promise<HfFlows> {
  if (!flows) {
    const { trainer } = await import('./trainerClient.ts');
    flows = new HfFlows({
      store: useHf,
      connection: () => trainer.connection,
      keep: { save: keepFolder, read: readKept, files: keptFiles, forget: forgetKept },
      seed: () => Math.floor(Math.random() * 0x1_0000_0000),
    });
  }
  return flows;
}
