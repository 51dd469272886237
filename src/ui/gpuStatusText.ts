// What the header's WebGPU badge says, in words a student reads at a glance: ready or not, and
// whether the adapter is a real GPU or a software one (SwiftShader, llvmpipe, WARP), which trains
// many times slower. The adapter's own name and the self-test's error go to the details.
import type { AboutGpu, LimitShortfall, SelftestResult } from '../worker/protocol.ts';

export type SelftestOk = Extract<SelftestResult, { type: 'selftest-ok' }>;

export const GPU_STATUS_TEXT = {
  checking: 'Checking WebGPU…',
  ready: 'WebGPU ready',
  softwareGpu: (name: string) => `software GPU (${name}): slower than a real GPU`,
  selftestFailed: 'kernel self-test FAILED: results may be wrong',
  cpuBackend: 'CPU reference backend (slow)',
  unavailable: 'WebGPU unavailable',
  error: 'WebGPU error',
  detailsLabel: 'WebGPU details',
  adapter: 'Adapter',
  selftest: 'Self-test',
  passed: 'kernel self-test passed',
  failed: 'kernel self-test FAILED',
  selftestWhat: (r: SelftestOk) => `${r.kernel}: ${r.values.length} values against the float64 reference, tolerance ${r.tolerance} (relative), ${r.ms.toFixed(0)} ms`,
  about: 'About this GPU',
  vendor: 'Vendor',
  architecture: 'Architecture',
  device: 'Device',
  description: 'Description',
  fallback: 'Fallback adapter',
  fallbackYes: 'yes: a fallback (often software) adapter, slower than a graphics card',
  fallbackNo: 'no',
  fallbackUnknown: 'not reported by this browser',
  limitsCaption: 'WebGPU limits the page uses',
  limitHead: 'Limit',
  needHead: 'Needs',
  requestedHead: 'Requested',
  adapterHead: 'This GPU',
  features: 'Optional features',
  noFeatures: 'none requested',
  softwareWhy: 'A software GPU runs the WebGPU kernels on the CPU: the same numbers, many times slower than a graphics card.',
} as const;

/** Software rasterisers that expose WebGPU on the CPU, by a fragment of the adapter's name. */
const SOFTWARE_ADAPTERS: readonly { match: RegExp; name: string }[] = [
  { match: /swiftshader/i, name: 'SwiftShader' },
  { match: /llvmpipe/i, name: 'llvmpipe' },
  { match: /lavapipe/i, name: 'lavapipe' },
  { match: /softpipe/i, name: 'softpipe' },
  { match: /basic render|\bwarp\b/i, name: 'WARP' },
];

/** The software renderer's short name when `adapter` is one, else null. */
export function softwareAdapter(adapter: string): string | null {
  return SOFTWARE_ADAPTERS.find((s) => s.match.test(adapter))?.name ?? null;
}

/** The adapter's name as shown: trimmed, capped, and never empty. */
export function adapterLabel(adapter: string): string {
  const name = adapter.replace(/\s+/g, ' ').trim();
  if (name.length === 0) return 'unknown adapter';
  return name.length > 60 ? `${name.slice(0, 59)}…` : name;
}

/** The badge's one line: "WebGPU ready · software GPU (SwiftShader): …", "WebGPU ready · nvidia …". */
export function readyHeadline(r: SelftestOk): string {
  const software = softwareAdapter(r.adapter);
  const what = software ? GPU_STATUS_TEXT.softwareGpu(software) : adapterLabel(r.adapter);
  return r.passed ? `${GPU_STATUS_TEXT.ready} · ${what}` : `${GPU_STATUS_TEXT.ready} · ${what} · ${GPU_STATUS_TEXT.selftestFailed}`;
}

/** The self-test line of the details: the verdict and the largest error against float64. */
export function selftestLine(r: SelftestOk): string {
  const err = Number.isFinite(r.maxAbsErr) ? r.maxAbsErr.toExponential(1) : String(r.maxAbsErr);
  return `${r.passed ? GPU_STATUS_TEXT.passed : GPU_STATUS_TEXT.failed} (max |err| ${err})`;
}

/** "maxComputeWorkgroupStorageSize: this page needs 16384, your GPU offers 8192". */
export function shortfallText(s: LimitShortfall): string {
  return `${s.name}: this page needs ${s.need}, your GPU offers ${s.have}`;
}

/** A limit's value as shown: grouped digits, bytes in MiB past 1 MiB, "—" when the adapter does not report it. */
export function limitValue(name: string, v: number): string {
  if (!Number.isFinite(v)) return '—';
  if (/Size$/.test(name) && v >= 1024 * 1024) return `${(v / (1024 * 1024)).toLocaleString('en-US', { maximumFractionDigits: 1 })} MiB`;
  return v.toLocaleString('en-US');
}

/** The name/value rows of "About this GPU": the adapter's own words (empty ones left out) and the fallback flag. */
export function aboutRows(a: AboutGpu): { label: string; value: string }[] {
  const T = GPU_STATUS_TEXT;
  const rows: { label: string; value: string }[] = [
    { label: T.vendor, value: a.vendor },
    { label: T.architecture, value: a.architecture },
    { label: T.device, value: a.device },
    { label: T.description, value: a.description },
  ].filter((r) => r.value.trim().length > 0);
  rows.push({ label: T.fallback, value: a.fallback === null ? T.fallbackUnknown : a.fallback ? T.fallbackYes : T.fallbackNo });
  rows.push({ label: T.features, value: a.features.length > 0 ? a.features.join(', ') : T.noFeatures });
  return rows;
}
