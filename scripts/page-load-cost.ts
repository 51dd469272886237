// What one page load costs the end-to-end suite: the built page (dist/) opened in fresh browser
// contexts, as Playwright opens it for each test, with the CPU seconds Chromium's processes spend
// (renderer, GPU process, browser, utilities; from /proc) until the GPU badge says "WebGPU ready",
// and then while the trainer warms up in the background, until the processes go idle.
//   npx vite build && npx tsx scripts/page-load-cost.ts [--loads N] [--port P] [--no-warm-up]
//     [--service-worker] [--gl-compositing]
// --no-warm-up: the pages set the test switch 'ppo-test-no-warm-up' (src/store/testSwitches.ts),
// as the specs that never train do (e2e/fixtures.ts). --service-worker lets the page install its
// offline worker (the specs block it unless they test it); --gl-compositing composites through
// SwiftShader's GL instead of in software (src/node/chromium.ts), as the screenshot tests do.
// Linux only (/proc). Prints one line per load and the mean.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { chromium } from '@playwright/test';
import { CHROMIUM_ARGS, CHROMIUM_PATH, SOFTWARE_COMPOSITING } from '../src/node/chromium.ts';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};
const loads = arg('--loads', 3);
const port = arg('--port', Number(process.env.PPO_E2E_PORT ?? 4173));
const noWarmUp = process.argv.includes('--no-warm-up');
const serviceWorker = process.argv.includes('--service-worker');
const glCompositing = process.argv.includes('--gl-compositing');
const TICKS = 100; // USER_HZ: /proc/<pid>/stat counts CPU time in 1/100 s on Linux

/** CPU seconds of every process below `root`, summed by Chromium process type. */
function cpuByType(root: number): Record<string, number> {
  const procs = new Map<number, { ppid: number; cpu: number; type: string }>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const cmd = readFileSync(`/proc/${name}/cmdline`, 'utf8');
      const type = /--utility-sub-type=[\w.]*?(\w+)\0/.exec(cmd)?.[1] ?? /--type=([\w-]+)/.exec(cmd)?.[1] ?? (cmd.includes('chrom') ? 'browser' : 'other');
      procs.set(Number(name), { ppid: Number(fields[1]), cpu: (Number(fields[11]) + Number(fields[12])) / TICKS, type });
    } catch {
      // the process ended while being read
    }
  }
  const out: Record<string, number> = {};
  const stack = [root];
  while (stack.length > 0) {
    const pid = stack.pop()!;
    for (const [child, p] of procs) {
      if (p.ppid !== pid) continue;
      out[p.type] = (out[p.type] ?? 0) + p.cpu;
      stack.push(child);
    }
  }
  return out;
}

const minus = (b: Record<string, number>, a: Record<string, number>) => Object.fromEntries(Object.entries(b).map(([k, v]) => [k, v - (a[k] ?? 0)]));
const total = (r: Record<string, number>) => Object.values(r).reduce((s, v) => s + v, 0);
const show = (r: Record<string, number>) =>
  `${total(r).toFixed(1)} s (${Object.entries(r)
    .filter(([k, v]) => v >= 0.05 && k !== 'other')
    .sort((x, y) => y[1] - x[1])
    .map(([k, v]) => `${k} ${v.toFixed(1)}`)
    .join(', ')})`;

const server = spawn(process.execPath, ['node_modules/vite/bin/vite.js', 'preview', '--port', String(port), '--strictPort'], { stdio: 'ignore' });
try {
  const url = `http://localhost:${port}/`;
  for (let tries = 0; ; tries++) {
    try {
      await fetch(url);
      break;
    } catch {
      if (tries > 60) throw new Error(`vite preview did not answer on ${url}`);
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  const args = glCompositing ? CHROMIUM_ARGS.filter((a) => a !== SOFTWARE_COMPOSITING) : CHROMIUM_ARGS;
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args });
  const sums = { ready: 0, after: 0, wall: 0 };
  for (let i = 0; i < loads; i++) {
    const context = await browser.newContext({ viewport: { width: 1360, height: 900 }, serviceWorkers: serviceWorker ? 'allow' : 'block' });
    if (noWarmUp) await context.addInitScript(() => localStorage.setItem('ppo-test-no-warm-up', '1'));
    const page = await context.newPage();
    const c0 = cpuByType(process.pid);
    const t0 = performance.now();
    await page.goto(url);
    await page.getByTestId('gpu-status').filter({ hasText: 'WebGPU ready' }).waitFor({ timeout: 180_000 });
    const wall = (performance.now() - t0) / 1000;
    const c1 = cpuByType(process.pid);
    // The warm-up: until three seconds in a row use under 0.15 s of CPU each (or two minutes).
    let last = c1;
    let quiet = 0;
    for (let s = 0; s < 120 && quiet < 3; s++) {
      await new Promise((r) => setTimeout(r, 1000));
      const now = cpuByType(process.pid);
      quiet = total(minus(now, last)) < 0.15 ? quiet + 1 : 0;
      last = now;
    }
    const ready = minus(c1, c0);
    const after = minus(last, c1);
    console.log(`load ${i + 1}: ${wall.toFixed(1)} s to "WebGPU ready", CPU ${show(ready)}; warm-up after it, CPU ${show(after)}`);
    sums.ready += total(ready);
    sums.after += total(after);
    sums.wall += wall;
    await context.close();
  }
  await browser.close();
  const n = loads;
  console.log(
    `${[noWarmUp && 'no warm-up', serviceWorker && 'service worker', glCompositing && 'GL compositing'].filter(Boolean).join(', ') || 'defaults'}: mean of ${n}: ${(sums.wall / n).toFixed(1)} s to ready; CPU ${(sums.ready / n).toFixed(1)} s to ready + ${(sums.after / n).toFixed(1)} s warm-up = ${((sums.ready + sums.after) / n).toFixed(1)} s a load (load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')})`,
  );
} finally {
  server.kill();
}
