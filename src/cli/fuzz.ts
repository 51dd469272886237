// npm run fuzz -- --count N --seed S [--only configs,checkpoints,kernels,files] [--limit-ms MS] [--webgpu K]
// Feeds hostile inputs to everything the project accepts (configs, URLs, checkpoint files, kernel
// JSON, feedback labels, metric exports) and prints per target how many inputs were tried and what
// each gave: a valid result, a named error, or a defect (crash, invalid result, hang). Exits 1 on
// any defect. The work runs in a child process that beats once per input; the parent ends it and
// reports a hang when a beat is overdue (a synchronous infinite loop cannot be timed out in-process).
import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { Backend } from '../backend/backend.ts';
import { CpuBackend } from '../backend/cpu/cpuBackend.ts';
import { FUZZ_TARGETS, formatReports, runCampaign, totalDefects, type FuzzTarget } from '../fuzz/campaign.ts';
import { setHeartbeat } from '../fuzz/outcome.ts';
import { runCli } from '../node/runCli.ts';

const USAGE = `usage: npm run fuzz -- --count N [--seed S] [--only ${FUZZ_TARGETS.join(',')}] [--limit-ms MS] [--webgpu K]`;
const CHILD = 'PPO_FUZZ_CHILD';

interface Args {
  count: number;
  seed: number;
  only: FuzzTarget[];
  limitMs: number;
  webgpu: number;
}

function parse(argv: string[]): Args | string[] {
  const { values } = parseArgs({
    args: argv,
    options: {
      count: { type: 'string', default: '1000' },
      seed: { type: 'string' },
      only: { type: 'string' },
      'limit-ms': { type: 'string', default: '10000' },
      webgpu: { type: 'string', default: '100' },
    },
  });
  const problems: string[] = [];
  const int = (name: string, raw: string | undefined, min: number): number => {
    const n = Number(raw);
    if (!Number.isSafeInteger(n) || n < min) problems.push(`--${name} = ${JSON.stringify(raw)}: an integer ≥ ${min} is required`);
    return n;
  };
  const count = int('count', values.count, 1);
  const seed = values.seed === undefined ? (Date.now() ^ (Math.random() * 2 ** 31)) >>> 0 : int('seed', values.seed, 0);
  const limitMs = int('limit-ms', values['limit-ms'], 100);
  const webgpu = int('webgpu', values.webgpu, 0);
  const only = (values.only?.split(',').map((s) => s.trim()) ?? [...FUZZ_TARGETS]) as FuzzTarget[];
  for (const t of only) if (!FUZZ_TARGETS.includes(t)) problems.push(`--only: "${t}" is not one of ${FUZZ_TARGETS.join(', ')}`);
  return problems.length > 0 ? problems : { count, seed, only, limitMs, webgpu };
}

async function webgpuBackend(): Promise<Backend | undefined> {
  try {
    const { makeBackend } = await import('../node/backend.ts');
    return await makeBackend('webgpu');
  } catch (e) {
    console.error(`WebGPU sample skipped: no device (${(e as Error).message})`);
    return undefined;
  }
}

/** The child: runs the campaign, beating to the parent before every input. */
async function child(a: Args): Promise<number> {
  let n = 0;
  setHeartbeat(() => process.send?.({ beat: ++n }));
  const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
  const ck = new Uint8Array(readFileSync(join(root, 'public', 'checkpoints', 'arithmetic.safetensors')));
  const webgpu = a.only.includes('kernels') && a.webgpu > 0 ? await webgpuBackend() : undefined;
  const t0 = performance.now();
  const reports = await runCampaign({
    count: a.count,
    seed: a.seed,
    only: a.only,
    limitMs: a.limitMs,
    cpu: new CpuBackend(),
    webgpu,
    webgpuCount: a.webgpu,
    arithmeticCheckpoint: ck,
  });
  console.log(formatReports(reports));
  const tried = reports.reduce((s, r) => s + r.tried, 0);
  const defects = totalDefects(reports);
  console.log(`\n${tried} inputs in ${((performance.now() - t0) / 1000).toFixed(1)} s, seed ${a.seed}: ${defects} defects`);
  console.log('(the page-side file pre-check, src/store/checkpoints.ts, needs Vite: it is fuzzed by tests/cli/fuzz_campaign.test.ts)');
  return defects > 0 ? 1 : 0;
}

/** The parent: forks the child and ends it when a beat is overdue. */
function watch(argv: string[], a: Args): Promise<number> {
  console.log(`fuzzing ${a.only.join(', ')}: ${a.count} inputs per target, seed ${a.seed}, ${a.limitMs} ms per input`);
  return new Promise((resolve) => {
    const proc = fork(fileURLToPath(import.meta.url), argv, { env: { ...process.env, [CHILD]: '1' }, execArgv: process.execArgv });
    let last = Date.now();
    let beats = 0;
    proc.on('message', (m: { beat?: number }) => {
      last = Date.now();
      beats = m.beat ?? beats;
    });
    // Setup (WebGPU device, trainer) happens before the first beat: allow it a minute.
    const timer = setInterval(() => {
      const overdue = Date.now() - last > a.limitMs * 2 + (beats === 0 ? 60_000 : 5_000);
      if (overdue) {
        console.error(`HANG: input ${beats} gave no answer for ${((Date.now() - last) / 1000).toFixed(0)} s; rerun with --seed ${a.seed} to reproduce`);
        proc.kill('SIGKILL');
      }
    }, 1000);
    proc.on('exit', (code, signal) => {
      clearInterval(timer);
      if (signal || code === null) console.error(`the fuzz process ended by ${signal}`);
      resolve(code ?? 1);
    });
  });
}

async function main(): Promise<number> {
  const argv = process.argv.slice(2);
  let a: Args | string[];
  try {
    a = parse(argv);
  } catch (e) {
    console.error(`${(e as Error).message}\n${USAGE}`);
    return 2;
  }
  if (Array.isArray(a)) {
    console.error(`invalid arguments:\n  ${a.join('\n  ')}\n${USAGE}`);
    return 2;
  }
  // The parent passes its chosen seed on so both report the same one.
  if (process.env[CHILD]) return child(a);
  return watch([...argv.filter((x, i) => x !== '--seed' && argv[i - 1] !== '--seed'), '--seed', String(a.seed)], a);
}

runCli(main, { stack: true });
