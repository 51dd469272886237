// Engine commands → runnable bash scripts. Values are quoted for bash and zsh alike: shell
// variables in double quotes, anything with brackets, spaces or quotes (Hydra lists such as
// '[0.9,0.999]', which zsh would glob) in single quotes, plain words bare.
import { DEFAULT_MODEL, ENGINE_TITLES, OPENRLHF_TARGET, VERL_TARGET } from './engines.ts';
import { type JobModel, jobModelPath } from './model.ts';
import type { OpenRlhfCommand } from './openrlhf.ts';
import type { VerlCommand } from './verl.ts';

const PLAIN = /^[A-Za-z0-9_.,/:+=@%-]+$/;

/** One shell word. A value starting with `$` is a variable reference (may continue with a path). */
export function shellWord(value: string): string {
  if (value.startsWith('$')) {
    const m = /^\$([A-Z_][A-Z0-9_]*)(.*)$/.exec(value);
    if (!m || !PLAIN.test(m[2] || 'x')) throw new Error(`shellWord: unsupported variable reference ${value}`);
    return `"\${${m[1]}}${m[2]}"`;
  }
  if (value !== '' && PLAIN.test(value)) return value;
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/** The verl override `key=value` as one word: the key is plain, the value quoted as needed. */
function verlArg(key: string, value: string): string {
  const word = shellWord(value);
  return `${key}=${word}`;
}

export interface ScriptHeader {
  task: string;
  gpus: number;
  /** The job's model section; the default model when absent. */
  model?: JobModel;
}

function preamble(engine: 'verl' | 'openrlhf', h: ScriptHeader, notes: string[]): string[] {
  return [
    '#!/usr/bin/env bash',
    `# ${ENGINE_TITLES[engine]} job exported by PPO Playground (task "${h.task}"). Run from anywhere: bash ${engine === 'verl' ? 'run_verl.sh' : 'run_openrlhf.sh'}`,
    `# Targets ${engine === 'verl' ? VERL_TARGET : OPENRLHF_TARGET}.`,
    'set -euo pipefail',
    'JOB_DIR="$(cd "$(dirname "$0")" && pwd)"',
    h.model
      ? `# The policy (and critic, for GAE): ${h.model.modelPath}, chosen at export; MODEL=… picks another Hugging Face chat model.`
      : `# The policy (and critic, for GAE): any Hugging Face chat model. Default: ${DEFAULT_MODEL}, 0.5B parameters, one 24 GB GPU.`,
    // The path is plain (model.ts checks it), so double quotes are enough.
    `MODEL="\${MODEL:-${jobModelPath(h.model)}}"`,
    `# GPUs on this one node: ${h.gpus}. Every batch size below was checked against this count; re-export with --gpus N for another.`,
    '# What differs from the playground, knob by knob:',
    ...notes,
  ];
}

function continued(program: string, args: string[]): string[] {
  return [program, ...args].map((part, i, all) => `${i === 0 ? '' : '  '}${part}${i < all.length - 1 ? ' \\' : ''}`);
}

export function renderVerl(cmd: VerlCommand, h: ScriptHeader): string {
  const args = cmd.overrides.map((o) => verlArg(o.key, o.value));
  return [...preamble('verl', h, cmd.notes), ...cmd.setup, ...continued(cmd.program, [...args, '"$@"']), ''].join('\n');
}

export function renderOpenRlhf(cmd: OpenRlhfCommand, h: ScriptHeader): string {
  const args = cmd.flags.map((f) => [f.flag, ...f.values.map(shellWord)].join(' '));
  return [...preamble('openrlhf', h, cmd.notes), ...continued(cmd.program, [...args, '"$@"']), ''].join('\n');
}
