// A PEFT adapter the visitor picks: the zip the page downloads (or any zip holding the two files,
// at any depth), or adapter_config.json and adapter_model.safetensors picked together. Refusals
// name what is missing.
import { unzipSync } from 'fflate';

export interface AdapterFiles {
  config: string;
  weights: Uint8Array;
}

const CONFIG = 'adapter_config.json';
const WEIGHTS = 'adapter_model.safetensors';
const base = (path: string) => path.slice(path.lastIndexOf('/') + 1);

export async function adapterFromFiles(files: readonly File[]): Promise<AdapterFiles> {
  const named = new Map<string, Uint8Array>();
  for (const f of files) {
    const bytes = new Uint8Array(await f.arrayBuffer());
    // A zip by its signature ("PK\x03\x04"), whatever its name says.
    if (bytes.length >= 4 && bytes[0] === 0x50 && bytes[1] === 0x4b && bytes[2] === 0x03 && bytes[3] === 0x04) {
      let entries: Record<string, Uint8Array>;
      try {
        entries = unzipSync(bytes);
      } catch (e) {
        throw new Error(`${f.name} is not a readable zip (${(e as Error).message})`);
      }
      for (const [path, data] of Object.entries(entries)) if (base(path) === CONFIG || base(path) === WEIGHTS) named.set(base(path), data);
    } else {
      named.set(f.name, bytes);
    }
  }
  const config = named.get(CONFIG);
  const weights = named.get(WEIGHTS);
  const missing = [config ? null : CONFIG, weights ? null : WEIGHTS].filter((x) => x !== null);
  if (missing.length > 0) throw new Error(`${missing.join(' and ')} ${missing.length > 1 ? 'are' : 'is'} missing: pick the adapter's zip, or both of its files`);
  return { config: new TextDecoder().decode(config), weights: weights! };
}
