// The playground's character model of a task — the SFT model kept in this browser, else the
// checkpoint shipped with the page — as the Hugging Face GPT-2 folder it is
// (src/model/hf/charModelFolder.ts), so "Your own model" opens it like any picked folder: its
// samples, tokens (one a character) and LoRA training on the same weights the playground trains.
import { checkpointFolderFiles } from '../model/hf/charModelFolder.ts';
import { t } from '../i18n/index.ts';
import type { PickedFolder } from './hfFolderFiles.ts';
import type { KeptSftModel } from './sftState.ts';

/** The folder's label: which task's model, in the GPT-2 layout. */
export const playgroundFolderLabel = (task: string) => `${task}-sft-gpt2`;

/** A character-model checkpoint (`bytes`) as the files of a GPT-2 folder. */
export function playgroundModelFolder(task: string, bytes: Uint8Array): PickedFolder {
  const files = checkpointFolderFiles(bytes);
  return { label: playgroundFolderLabel(task), files: [...files].map(([name, b]) => new File([b.slice()], name)) };
}

/** The checkpoint of `task`'s character model: 1 · SFT's `kept` one, else the one the page serves under `baseUrl`. */
export async function playgroundCheckpoint(baseUrl: string, task: string, kept: KeptSftModel | undefined): Promise<Uint8Array> {
  if (kept) return new Uint8Array(kept.bytes);
  const file = `checkpoints/${task}.safetensors`;
  const res = await fetch(`${baseUrl}${file}`);
  if (!res.ok) throw new Error(t('notices:hf.shippedMissing', { file, status: res.status }));
  return new Uint8Array(await res.arrayBuffer());
}
