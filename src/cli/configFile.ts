// The `--config file.json` of the command-line tools: its parsed JSON, or a problem naming the file
// (a missing file and malformed JSON are the user's to fix, reported with every other problem).
import { readFileSync } from 'node:fs';

export function readConfigFile(path: string | undefined, problems: string[]): unknown {
  if (path === undefined) return undefined;
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    problems.push(`--config ${path}: ${(e as Error).message}`);
    return undefined;
  }
}
