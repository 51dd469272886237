#!/usr/bin/env node
// Runs every check and test suite: the typecheck, the linter and the format check (Biome, no
// writing), Vitest's projects one after another (unit: pure TypeScript; cli: the command-line
// tools run as processes, and the fuzz campaign; integration: CPU-only runs of the model and
// trainer; gpu: real WGSL on Dawn), the gpu tests again on wgpu (Deno's WebGPU on Mesa's
// lavapipe, with a preset trained on both engines and compared: scripts/wgpu-tests.mjs), the
// production build and Playwright (the built page in Chromium with WebGPU); the wgpu suite and
// the integration project run beside Playwright, which leaves part of the machine idle. Checks the system
// packages first: installs the missing ones with apt-get when it may (root, or sudo without a
// password; only the packages named, no recommended extras), otherwise prints the one command to
// run. Ends with a summary, one line per suite with its counts and its wall-clock time, and one
// last line: "All: N passed, N failed[, N skipped]"; a failed check counts as one failure.
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { relative } from 'node:path';

const REPORTS = '.reports';
const chromium = process.env.PPO_CHROMIUM ?? '/usr/bin/chromium';
const SWIFTSHADER_ICD = '/usr/lib/chromium/vk_swiftshader_icd.json';

/** Mesa's lavapipe Vulkan driver, the one the wgpu tests run on. */
function hasLavapipe() {
  const dir = '/usr/share/vulkan/icd.d';
  return existsSync(dir) && readdirSync(dir).some((n) => /^lvp_icd\..*\.json$/.test(n));
}

function hasVulkanLoader() {
  const out = spawnSync('ldconfig', ['-p'], { encoding: 'utf8' });
  if (out.status === 0 && /libvulkan\.so\.1\b/.test(out.stdout)) return true;
  return ['/usr/lib/x86_64-linux-gnu/libvulkan.so.1', '/usr/lib/aarch64-linux-gnu/libvulkan.so.1', '/usr/lib/libvulkan.so.1'].some(existsSync);
}

/** What the tests need from the system, each with the Debian package that provides it. */
function missingSystemPackages() {
  const missing = []; // { pkg, why }
  if (!existsSync(chromium)) {
    missing.push({
      pkg: process.env.PPO_CHROMIUM ? null : 'chromium',
      why: `Chromium not found at ${chromium} (set PPO_CHROMIUM to your Chrome/Chromium binary, or install Debian's: chromium)`,
    });
  }
  if (process.platform === 'linux' && !hasVulkanLoader()) missing.push({ pkg: 'libvulkan1', why: 'the Vulkan loader libvulkan.so.1 — Dawn needs it for WebGPU in Node' });
  if (process.platform === 'linux' && !process.env.VK_ICD_FILENAMES && !process.env.PPO_USE_SYSTEM_VULKAN && !existsSync(SWIFTSHADER_ICD)) {
    missing.push({
      pkg: 'chromium',
      why: `a Vulkan driver: SwiftShader ships in Debian's chromium package (${SWIFTSHADER_ICD}); with a real GPU driver set PPO_USE_SYSTEM_VULKAN=1`,
    });
  }
  if (process.platform === 'linux' && !process.env.PPO_WGPU_VK_ICD && !hasLavapipe())
    missing.push({ pkg: 'mesa-vulkan-drivers', why: "Mesa's lavapipe Vulkan driver (mesa-vulkan-drivers) — the wgpu tests run Deno's WebGPU on it" });
  if (process.platform === 'linux' && !hasFont()) missing.push({ pkg: 'fonts-dejavu-core', why: 'a font for the screenshot tests (fonts-dejavu-core)' });
  if (process.platform === 'linux' && !hasItalicFont())
    missing.push({ pkg: 'fonts-dejavu-extra', why: 'the italic DejaVu faces the screenshot baselines were made with (fonts-dejavu-extra)' });
  if (process.platform === 'linux' && !hasCjkFont()) missing.push({ pkg: 'fonts-noto-cjk', why: 'a Chinese font for the zh-CN page tests and screenshots (fonts-noto-cjk)' });
  if (spawnSync('python3', ['--version'], { encoding: 'utf8' }).status !== 0)
    missing.push({ pkg: 'python3', why: "python3 — the exported job's reward.py is checked by running it" });
  if (spawnSync('python3', ['-c', 'import numpy'], { encoding: 'utf8' }).status !== 0)
    missing.push({ pkg: 'python3-numpy', why: 'numpy — an independent reader checks the BF16 shards of the synthetic model folders' });
  return missing;
}

function hasFont() {
  const out = spawnSync('fc-list', [], { encoding: 'utf8' });
  return out.status === 0 ? /dejavu/i.test(out.stdout) : existsSync('/usr/share/fonts/truetype/dejavu');
}

/** DejaVu Sans Oblique: without it Chromium slants the upright face, and italic text differs from the baselines. */
function hasItalicFont() {
  const out = spawnSync('fc-list', ['DejaVu Sans:style=Oblique', 'file'], { encoding: 'utf8' });
  return out.status === 0 ? out.stdout.trim() !== '' : existsSync('/usr/share/fonts/truetype/dejavu/DejaVuSans-Oblique.ttf');
}

function hasCjkFont() {
  const out = spawnSync('fc-list', [':lang=zh-cn'], { encoding: 'utf8' });
  return out.status === 0 ? out.stdout.trim() !== '' : existsSync('/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc');
}

/** Installs Debian packages with apt-get when this process may (root, or sudo without a password). */
function aptInstall(pkgs) {
  if (process.platform !== 'linux' || process.env.PPO_NO_APT || spawnSync('apt-get', ['--version'], { stdio: 'ignore' }).status !== 0) return false;
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  const sudo = !root && spawnSync('sudo', ['-n', 'true'], { stdio: 'ignore' }).status === 0;
  if (!root && !sudo) return false;
  const prefix = root ? [] : ['sudo', '-n'];
  console.log(`Installing the system packages the tests need: ${pkgs.join(' ')} (apt-get${root ? '' : ' through sudo'}; set PPO_NO_APT=1 to skip)`);
  const apt = (args) => {
    const [cmd, ...rest] = [...prefix, 'env', 'DEBIAN_FRONTEND=noninteractive', 'apt-get', ...args];
    return spawnSync(cmd, rest, { stdio: 'inherit' }).status === 0;
  };
  // No recommended packages: no test needs them (with them, chromium alone pulls in systemd, avahi
  // and printing helpers, about 300 packages).
  return apt(['update', '-qq']) && apt(['install', '-y', '-qq', '--no-install-recommends', ...pkgs]);
}

let missing = missingSystemPackages();
const installable = [...new Set(missing.map((m) => m.pkg).filter(Boolean))];
if (installable.length > 0 && aptInstall(installable)) missing = missingSystemPackages();
if (missing.length > 0) {
  console.error(`Cannot run the tests; missing:\n  - ${missing.map((m) => m.why).join('\n  - ')}`);
  const pkgs = [...new Set(missing.map((m) => m.pkg).filter(Boolean))];
  if (pkgs.length > 0) console.error(`\nOn Debian/Ubuntu:  sudo apt-get install -y --no-install-recommends ${pkgs.join(' ')}`);
  process.exit(2);
}

// Random test inputs are fresh each run; the seed is fixed here, before the runners' environment is
// copied, so that the summary names the seed the tests used.
process.env.TEST_SEED ??= String((Date.now() ^ (Math.random() * 2 ** 31)) >>> 0);
const env = { ...process.env };
if (!env.VK_ICD_FILENAMES && !env.PPO_USE_SYSTEM_VULKAN && existsSync(SWIFTSHADER_ICD)) env.VK_ICD_FILENAMES = SWIFTSHADER_ICD;

rmSync(REPORTS, { recursive: true, force: true });
mkdirSync(REPORTS, { recursive: true });

/** Vitest's projects (vitest.config.ts), each run as its own step so that each has its own time. */
const VITEST_PROJECTS = ['unit', 'cli', 'integration', 'gpu'];

/** Wall-clock time as the summary prints it: "42 s", "3 min 07 s". */
function duration(ms) {
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
}

/** Runs one step with its output shown; returns its exit status and its wall-clock time. */
function run(title, cmd, args) {
  console.log(`\n=== ${title}: ${cmd} ${args.join(' ')}`);
  const start = performance.now();
  const r = spawnSync(cmd, args, { stdio: 'inherit', env });
  return { status: r.status ?? 1, ms: performance.now() - start };
}

function readJson(path) {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return null;
  }
}

const only = process.argv[2]; // optional: "vitest", one Vitest project's name, "wgpu" or "e2e"
const wants = (suite) => !only || only === suite || (only === 'vitest' && VITEST_PROJECTS.includes(suite));
const started = performance.now();
let status = 0;
let passed = 0;
let failed = 0;
let skipped = 0;
const lines = []; // the summary, one line per step
const fileTimes = []; // { file, ms }: where the time went, for the slowest-files list

/** Adds a suite's counts to the totals and its line (counts and time) to the summary. */
function report(name, p, ms, note = '') {
  if (p.passed + p.failed === 0) {
    lines.push(`${name}: no tests ran — counted as a failure`);
    failed++;
  }
  const counts = `${p.passed} passed, ${p.failed} failed${p.skipped ? `, ${p.skipped} skipped` : ''}`;
  lines.push(`${name}: ${counts}${note ? ` ${note}` : ''} — ${duration(ms)}`);
  passed += p.passed;
  failed += p.failed;
  skipped += p.skipped;
}

/** A step without a test count (typecheck, lint, format, build): one failure when it fails. */
function check(name, title, cmd, args) {
  const r = run(title, cmd, args);
  if (r.status !== 0) console.error(`${name} failed (counted as a failure)`);
  lines.push(`${name}: ${r.status === 0 ? 'ok' : 'failed — counted as a failure'} — ${duration(r.ms)}`);
  if (r.status !== 0) failed++;
  return r.status === 0;
}

/** The exit status and wall-clock time of `child`, started at `start`, once it ends. */
function exited(child, start) {
  return new Promise((resolve) => {
    child.on('error', () => resolve({ status: 1, ms: performance.now() - start }));
    child.on('exit', (code) => resolve({ status: code ?? 1, ms: performance.now() - start }));
  });
}

/**
 * A step started in the background: its output goes to a file, printed by `print()` once the
 * foreground step's output is done; `done` gives its exit status and its own wall-clock time
 * (Playwright runs with `runAsync`, so an exit is noticed when it happens).
 * Only worth it beside a step that leaves a core idle (Playwright): beside the unit tests, which
 * keep both cores busy, the typecheck took as long as the two one after the other.
 */
function background(title, cmd, args, logName, beside) {
  const log = `${REPORTS}/${logName}.log`;
  console.log(`\n=== ${title}: ${cmd} ${args.join(' ')} — in the background beside ${beside}; its output follows at the end`);
  const fd = openSync(log, 'w');
  const done = exited(spawn(cmd, args, { stdio: ['ignore', fd, fd], env }), performance.now());
  closeSync(fd);
  const print = () => {
    console.log(`\n=== ${title} (ran in the background beside ${beside})`);
    console.log(readFileSync(log, 'utf8'));
  };
  return { done, print };
}

/** Like `run`, but the event loop stays free meanwhile (background steps start and end on time). */
function runAsync(title, cmd, args) {
  console.log(`\n=== ${title}: ${cmd} ${args.join(' ')}`);
  return exited(spawn(cmd, args, { stdio: 'inherit', env }), performance.now());
}

/** A summary line kept in its place for a step that reports later; `fill` runs the report into it. */
function reserveLine(name) {
  const token = `${name}: not run`;
  lines.push(token);
  return (fill) => {
    const before = lines.length;
    fill();
    const added = lines.splice(before);
    lines.splice(lines.indexOf(token), 1, ...added);
  };
}

if (!only) {
  check('typecheck', 'Typecheck', 'npx', ['tsc', '--noEmit', '-p', 'tsconfig.json']);
  check('lint', 'Lint', 'npm', ['run', '-s', 'lint']);
  check('format', 'Format check (npm run format writes the fixes)', 'npm', ['run', '-s', 'format:check']);
}

const WGPU_TITLE = "wgpu (the gpu tests on Deno's WebGPU, Mesa lavapipe; a preset trained on Dawn and wgpu, compared)";
const WGPU_ARGS = ['scripts/wgpu-tests.mjs'];

/** Adds the wgpu suite's report to the summary. */
function reportWgpu(r) {
  status |= r.status;
  const w = readJson(`${REPORTS}/wgpu.json`);
  if (!w) {
    lines.push(`wgpu: no report (Deno did not start or crashed) — counted as a failure — ${duration(r.ms)}`);
    failed++;
  } else {
    report('wgpu', { passed: w.passed, failed: w.failed, skipped: w.skipped ?? 0 }, r.ms, `(${w.adapter}, Deno ${w.deno})${r.beside ? `, beside ${r.beside}` : ''}`);
  }
}

/** Adds a Vitest project's report (its JSON file) to the summary. */
function reportVitest(project, r, json, note = '') {
  status |= r.status;
  const v = readJson(json);
  if (!v) {
    lines.push(`${project}: no report (the run crashed) — counted as a failure — ${duration(r.ms)}`);
    failed++;
    return;
  }
  const p = { passed: 0, failed: 0, skipped: 0 };
  for (const file of v.testResults ?? []) {
    for (const a of file.assertionResults ?? []) {
      if (a.status === 'passed') p.passed++;
      else if (a.status === 'failed') p.failed++;
      else p.skipped++;
    }
    if (file.status === 'failed' && (file.assertionResults ?? []).length === 0) p.failed++; // a file that failed to load
    fileTimes.push({ file: relative(process.cwd(), file.name), ms: file.endTime - file.startTime });
  }
  if (project === 'gpu' && p.skipped > 0) {
    lines.push(`gpu: ${p.skipped} tests skipped — WebGPU tests must run, counted as failures`);
    p.failed += p.skipped;
    p.skipped = 0;
  }
  report(project, p, r.ms, note);
}

const vitestArgs = (project, json) => ['vitest', 'run', '--project', project, '--reporter=default', '--reporter=json', `--outputFile.json=${json}`];

// Steps that leave a core idle get a second suite beside them. Measured on 2 cores, 2026-12-01:
// the gpu project took 227 s alone and 265 s with the wgpu suite (Deno on lavapipe, about one core)
// beside it, which took 104 s alone and 155 s there; beside Playwright (about 1.55 cores over its
// 12 minutes) the wgpu suite and the integration project slowed it by about their own time, so
// there the integration project alone runs, on one worker. Summary lines keep their places.
const wgpuBesideGpu = wants('gpu') && wants('wgpu');
const besideE2e = wants('e2e') ? ['integration'].filter(wants) : [];
const later = {}; // project → the function that fills its reserved summary line
for (const project of VITEST_PROJECTS.filter(wants)) {
  if (besideE2e.includes(project)) {
    later[project] = reserveLine(project);
    continue;
  }
  const json = `${REPORTS}/vitest-${project}.json`;
  if (project === 'gpu' && wgpuBesideGpu) {
    const wgpu = background(WGPU_TITLE, 'node', WGPU_ARGS, 'wgpu', 'the gpu project');
    reportVitest(project, await runAsync(`Vitest ${project}`, 'npx', vitestArgs(project, json)), json);
    const r = await wgpu.done;
    wgpu.print();
    reportWgpu({ ...r, beside: 'the gpu project' });
    continue;
  }
  reportVitest(project, run(`Vitest ${project}`, 'npx', vitestArgs(project, json)), json);
}
if (wants('wgpu') && !wgpuBesideGpu) reportWgpu(run(WGPU_TITLE, 'node', WGPU_ARGS));

/** The steps beside Playwright, one after the other; each one's result as it ends. */
async function runBesideE2e() {
  const steps = [];
  for (const name of besideE2e) {
    const json = `${REPORTS}/vitest-${name}.json`;
    const step = background(`Vitest ${name}, one worker`, 'npx', [...vitestArgs(name, json), '--maxWorkers=1'], `vitest-${name}`, 'Playwright');
    steps.push({ name, json, step, r: await step.done });
  }
  return steps;
}

if (wants('e2e')) {
  const beside = runBesideE2e();
  if (!check('build', 'Build the page', 'npx', ['vite', 'build', '--logLevel', 'warn'])) {
    console.error('vite build failed; end-to-end tests cannot run');
    lines.push('e2e: not run (the build failed)');
  } else {
    const r = await runAsync('Playwright (end-to-end in Chromium with WebGPU)', 'npx', ['playwright', 'test']);
    status |= r.status;
    const pw = readJson(`${REPORTS}/playwright.json`);
    if (!pw) {
      lines.push(`e2e: no report (the run crashed) — counted as a failure — ${duration(r.ms)}`);
      failed++;
    } else {
      const s = pw.stats ?? {};
      report('e2e', { passed: (s.expected ?? 0) + (s.flaky ?? 0), failed: s.unexpected ?? 0, skipped: s.skipped ?? 0 }, r.ms);
      for (const suite of pw.suites ?? []) fileTimes.push({ file: `e2e/${suite.file}`, ms: playwrightMs(suite) });
    }
  }
  for (const { name, json, step, r } of await beside) {
    step.print();
    later[name](() => reportVitest(name, r, json, '(one worker, beside Playwright)'));
  }
}

/** The summed durations of every test result under a Playwright suite (a spec file). */
function playwrightMs(suite) {
  let ms = 0;
  for (const spec of suite.specs ?? []) for (const t of spec.tests ?? []) for (const res of t.results ?? []) ms += res.duration ?? 0;
  for (const inner of suite.suites ?? []) ms += playwrightMs(inner);
  return ms;
}

if (fileTimes.length > 0) {
  console.log('\n=== Slowest test files');
  for (const f of fileTimes.sort((a, b) => b.ms - a.ms).slice(0, 12)) console.log(`  ${duration(f.ms).padStart(10)}  ${f.file}`);
}
console.log('\n=== Summary');
for (const l of lines) console.log(`  ${l}`);
console.log(`  random inputs: TEST_SEED=${process.env.TEST_SEED} (rerun with it to reproduce)`);
console.log(`  wall-clock: ${duration(performance.now() - started)} for every step together`);
if (failed === 0 && status !== 0) failed = 1; // a runner failed without a failing test (e.g. a crash)
console.log(`All: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(failed > 0 ? 1 : 0);
