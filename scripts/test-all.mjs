#!/usr/bin/env node
// Runs every check and test suite: the typecheck, the linter and the format check (Biome, no
// writing), Vitest (unit: pure TypeScript; integration: CPU-only runs of the model and trainer;
// gpu: real WGSL on Dawn), the gpu tests again on wgpu (Deno's WebGPU on Mesa's lavapipe, with a
// preset trained on both engines and compared: scripts/wgpu-tests.mjs) and Playwright (the built
// page in Chromium with WebGPU). Checks the
// system packages first: installs the missing ones with apt-get when it may (root, or sudo without
// a password), otherwise prints the one command to run. Ends with one summary line:
// "All: N passed, N failed[, N skipped]"; a failed check counts as one failure.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';

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
  if (process.platform === 'linux' && !hasCjkFont()) missing.push({ pkg: 'fonts-noto-cjk', why: 'a Chinese font for the zh-CN page tests and screenshots (fonts-noto-cjk)' });
  if (spawnSync('python3', ['--version'], { encoding: 'utf8' }).status !== 0)
    missing.push({ pkg: 'python3', why: "python3 — the exported job's reward.py is checked by running it" });
  return missing;
}

function hasFont() {
  const out = spawnSync('fc-list', [], { encoding: 'utf8' });
  return out.status === 0 ? /dejavu/i.test(out.stdout) : existsSync('/usr/share/fonts/truetype/dejavu');
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
  return apt(['update', '-qq']) && apt(['install', '-y', '-qq', ...pkgs]);
}

let missing = missingSystemPackages();
const installable = [...new Set(missing.map((m) => m.pkg).filter(Boolean))];
if (installable.length > 0 && aptInstall(installable)) missing = missingSystemPackages();
if (missing.length > 0) {
  console.error(`Cannot run the tests; missing:\n  - ${missing.map((m) => m.why).join('\n  - ')}`);
  const pkgs = [...new Set(missing.map((m) => m.pkg).filter(Boolean))];
  if (pkgs.length > 0) console.error(`\nOn Debian/Ubuntu:  sudo apt-get install -y ${pkgs.join(' ')}`);
  process.exit(2);
}

// Random test inputs are fresh each run; the seed is fixed here, before the runners' environment is
// copied, so that the summary names the seed the tests used.
process.env.TEST_SEED ??= String((Date.now() ^ (Math.random() * 2 ** 31)) >>> 0);
const env = { ...process.env };
if (!env.VK_ICD_FILENAMES && !env.PPO_USE_SYSTEM_VULKAN && existsSync(SWIFTSHADER_ICD)) env.VK_ICD_FILENAMES = SWIFTSHADER_ICD;

rmSync(REPORTS, { recursive: true, force: true });
mkdirSync(REPORTS, { recursive: true });

function run(title, cmd, args) {
  console.log(`\n=== ${title}: ${cmd} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { stdio: 'inherit', env });
  return r.status ?? 1;
}

const only = process.argv[2]; // optional: "vitest", "wgpu" or "e2e"
let status = 0;
const checks = []; // { name, ok }: steps without a test count, one failure each
if (!only) {
  for (const [name, title, cmd, args] of [
    ['typecheck', 'Typecheck', 'npx', ['tsc', '--noEmit', '-p', 'tsconfig.json']],
    ['lint', 'Lint', 'npm', ['run', '-s', 'lint']],
    ['format', 'Format check (npm run format writes the fixes)', 'npm', ['run', '-s', 'format:check']],
  ]) {
    const ok = run(title, cmd, args) === 0;
    if (!ok) console.error(`${name} failed (counted as a failure)`);
    checks.push({ name, ok });
  }
}
if (!only || only === 'vitest') {
  status |= run('Vitest (unit + integration + gpu)', 'npx', ['vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${REPORTS}/vitest.json`]);
}
if (!only || only === 'wgpu') {
  status |= run("wgpu (the gpu tests on Deno's WebGPU, Mesa lavapipe; a preset trained on Dawn and wgpu, compared)", 'node', ['scripts/wgpu-tests.mjs']);
}
if (!only || only === 'e2e') {
  const build = run('Build the page', 'npx', ['vite', 'build', '--logLevel', 'warn']);
  if (build !== 0) {
    console.error('vite build failed; end-to-end tests cannot run');
    status |= 1;
  } else {
    status |= run('Playwright (end-to-end in Chromium with WebGPU)', 'npx', ['playwright', 'test']);
  }
}

// ---- summary from the runners' JSON reports
let passed = 0,
  failed = 0,
  skipped = 0;
const lines = [];
for (const c of checks) {
  lines.push(`${c.name}: ${c.ok ? 'ok' : 'failed — counted as a failure'}`);
  if (!c.ok) failed++;
}
function readJson(path) {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return null;
  }
}
if (!only || only === 'vitest') {
  const v = readJson(`${REPORTS}/vitest.json`);
  if (!v) {
    lines.push('vitest: no report (the run crashed)');
    failed++;
  } else {
    const byProject = {};
    for (const file of v.testResults ?? []) {
      const project = file.name.includes('/tests/gpu/') ? 'gpu' : file.name.includes('/tests/integration/') ? 'integration' : 'unit';
      byProject[project] ??= { passed: 0, failed: 0, skipped: 0 };
      const p = byProject[project];
      for (const a of file.assertionResults ?? []) {
        if (a.status === 'passed') p.passed++;
        else if (a.status === 'failed') p.failed++;
        else p.skipped++;
      }
      if (file.status === 'failed' && (file.assertionResults ?? []).length === 0) p.failed++; // a file that failed to load
    }
    for (const project of ['unit', 'integration', 'gpu']) {
      const p = byProject[project] ?? { passed: 0, failed: 0, skipped: 0 };
      if (p.passed + p.failed === 0) {
        lines.push(`${project}: no tests ran — counted as a failure`);
        failed++;
      }
      if (project === 'gpu' && p.skipped > 0) {
        lines.push(`gpu: ${p.skipped} tests skipped — WebGPU tests must run, counted as failures`);
        failed += p.skipped;
        p.skipped = 0;
      }
      lines.push(`${project}: ${p.passed} passed, ${p.failed} failed${p.skipped ? `, ${p.skipped} skipped` : ''}`);
      passed += p.passed;
      failed += p.failed;
      skipped += p.skipped;
    }
  }
}
if (!only || only === 'wgpu') {
  const w = readJson(`${REPORTS}/wgpu.json`);
  if (!w) {
    lines.push('wgpu: no report (Deno did not start or crashed)');
    failed++;
  } else {
    if (w.passed + w.failed === 0) {
      lines.push('wgpu: no tests ran — counted as a failure');
      failed++;
    }
    lines.push(`wgpu: ${w.passed} passed, ${w.failed} failed${w.skipped ? `, ${w.skipped} skipped` : ''} (${w.adapter}, Deno ${w.deno}, ${Math.round(w.seconds)} s)`);
    passed += w.passed;
    failed += w.failed;
    skipped += w.skipped;
  }
}
if (!only || only === 'e2e') {
  const pw = readJson(`${REPORTS}/playwright.json`);
  if (!pw) {
    lines.push('e2e: no report (the run crashed or the build failed)');
    failed++;
  } else {
    const s = pw.stats ?? {};
    const p = { passed: (s.expected ?? 0) + (s.flaky ?? 0), failed: s.unexpected ?? 0, skipped: s.skipped ?? 0 };
    if (p.passed + p.failed === 0) {
      lines.push('e2e: no tests ran — counted as a failure');
      failed++;
    }
    lines.push(`e2e: ${p.passed} passed, ${p.failed} failed${p.skipped ? `, ${p.skipped} skipped` : ''}`);
    passed += p.passed;
    failed += p.failed;
    skipped += p.skipped;
  }
}
console.log('\n=== Summary');
for (const l of lines) console.log(`  ${l}`);
console.log(`  random inputs: TEST_SEED=${process.env.TEST_SEED} (rerun with it to reproduce)`);
if (failed === 0 && status !== 0) failed = 1; // a runner failed without a failing test (e.g. a crash)
console.log(`All: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(failed > 0 ? 1 : 0);
