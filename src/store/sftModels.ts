// The SFT models the page keeps across reloads: IndexedDB store `sft`, one record per task (the
// safetensors bytes and what they are). A record that does not check out (its metadata, or its
// bytes as an actor of its task) is dropped with the reason, never handed to the worker.
import { t } from '../i18n/index.ts';
import { parseCheckpoint } from '../model/checkpoint.ts';
import { checkActorFile } from './checkpoints.ts';
import { SFT, withStores } from './db.ts';
import { sftMetaProblem } from './modelSize.ts';
import type { KeptSftModel } from './sftState.ts';

export async function saveSftModel(m: KeptSftModel): Promise<void> {
  await withStores([SFT], 'readwrite', (tx) => tx.objectStore(SFT).put(m));
}

export async function deleteSftModel(task: string): Promise<void> {
  await withStores([SFT], 'readwrite', (tx) => tx.objectStore(SFT).delete(task));
}

/** Why a stored record cannot be used, or null. */
export function sftRecordProblem(r: unknown): string | null {
  if (typeof r !== 'object' || r === null) return t('notices:sftRecord.notRecord');
  const m = r as Partial<KeptSftModel>;
  if (!(m.bytes instanceof ArrayBuffer)) return t('notices:sftRecord.noBytes');
  if (typeof m.task !== 'string') return t('notices:sftRecord.noTask');
  if (m.origin !== 'tab' && m.origin !== 'file') return t('notices:sftRecord.origin', { origin: JSON.stringify(m.origin), tab: 'tab', file: 'file' });
  if (m.meta !== null) {
    const p = sftMetaProblem(m.meta);
    if (p) return p;
  }
  const bad = checkActorFile(new Uint8Array(m.bytes), m.task);
  if (bad) return bad;
  const cfg = parseCheckpoint(new Uint8Array(m.bytes)).config;
  if (cfg.nLayer !== m.dims?.nLayer || cfg.nHead !== m.dims?.nHead || cfg.dModel !== m.dims?.dModel) return t('notices:sftRecord.sizeDiffers');
  return null;
}

/** Every usable kept model, and the tasks whose record was dropped with why. */
export async function loadSftModels(): Promise<{ models: KeptSftModel[]; dropped: { task: string; why: string }[] }> {
  const all = await withStores([SFT], 'readonly', (tx) => {
    const req = tx.objectStore(SFT).getAll();
    return new Promise<unknown[]>((resolve, reject) => {
      req.onsuccess = () => resolve(req.result);
      req.onerror = () => reject(req.error);
    });
  }).then((p) => p);
  const models: KeptSftModel[] = [];
  const dropped: { task: string; why: string }[] = [];
  for (const r of all) {
    const why = sftRecordProblem(r);
    if (why) {
      const task = String((r as { task?: unknown })?.task);
      dropped.push({ task, why });
      await deleteSftModel(task).catch(() => undefined);
    } else models.push(r as KeptSftModel);
  }
  return { models, dropped };
}
