// What the header's WebGPU badge says, in words a student reads at a glance: ready or not, and
// whether the adapter is a real GPU or a software one (SwiftShader, llvmpipe, WARP), which trains
// many times slower. The adapter's own name and the self-test's error go to the details.
import type { SelftestResult } from '../worker/protocol.ts';

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
