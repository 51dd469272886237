// npm runs a script named `pre<name>` before every `npm run <name>`, so `npm run train` first runs
// `pretrain` (the SFT command the README documents) with no arguments. A pre-hook never receives
// arguments and a real pretrain call needs `--task`, so only an argument-less call is ambiguous;
// for that case we ask the npm process itself which script the user named.
import { readFileSync } from 'node:fs';

/**
 * true: this argument-less run is npm's pre-hook of another script (exit quietly);
 * false: the user ran this script directly; undefined: cannot tell (no /proc, or not under npm).
 */
export function isNpmPreHook(): boolean | undefined {
  const event = process.env.npm_lifecycle_event; // e.g. "pretrain", both as hook and when run directly
  if (!event || !event.startsWith('pre')) return false;
  try {
    let pid = process.ppid;
    for (let depth = 0; depth < 8 && pid > 1; depth++) {
      // npm sets its process title to "npm run <name> …", which replaces the NUL-separated argv
      const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split(/[\0\s]+/).filter(Boolean);
      const runAt = argv.findIndex((a) => a === 'run' || a === 'run-script');
      if (runAt >= 0 && argv.some((a) => /(^|[/\\])npm(-cli\.js)?$/.test(a))) return argv[runAt + 1] !== event;
      // /proc/<pid>/stat: "pid (comm) state ppid …"; comm may contain spaces, so split after ')'
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      pid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    }
  } catch {
    return undefined;
  }
  return undefined;
}
