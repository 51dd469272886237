// What the header's WebGPU badge says, in words a student reads at a glance: ready or not, and
// whether the adapter is a real GPU or a software one (SwiftShader, llvmpipe, WARP), which trains
// many times slower. The adapter's own name and the self-test's error go to the details.
// Words come from the `gpu` namespace at call time, so a language switch re-words them.
import { formatNumber, t } from '../i18n/index.ts';
import type { AboutGpu, LimitShortfall, SelftestResult } from '../worker/protocol.ts';

export type SelftestOk = Extract<SelftestResult, { type: 'selftest-ok' }>;

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
  if (name.length === 0) return t('gpu:status.unknownAdapter');
  return name.length > 60 ? `${name.slice(0, 59)}…` : name;
}

/** The badge's one line: "WebGPU ready · software GPU (SwiftShader): …", "WebGPU ready · nvidia …". */
export function readyHeadline(r: SelftestOk): string {
  const software = softwareAdapter(r.adapter);
  const what = software ? t('gpu:status.softwareGpu', { name: software }) : adapterLabel(r.adapter);
  const ready = t('gpu:status.ready');
  return r.passed ? `${ready} · ${what}` : `${ready} · ${what} · ${t('gpu:status.selftestFailed')}`;
}

/** The self-test line of the details: the verdict and the largest error against float64. */
export function selftestLine(r: SelftestOk): string {
  const err = Number.isFinite(r.maxAbsErr) ? r.maxAbsErr.toExponential(1) : String(r.maxAbsErr);
  return t('gpu:status.selftestLine', { verdict: r.passed ? t('gpu:status.passed') : t('gpu:status.failed'), err });
}

/** What the self-test ran: the kernel, how many values, the tolerance and the time. */
export function selftestWhat(r: SelftestOk): string {
  return t('gpu:status.selftestWhat', { kernel: r.kernel, values: r.values.length, tolerance: r.tolerance, ms: r.ms.toFixed(0) });
}

/** "maxComputeWorkgroupStorageSize: this page needs 16384, your GPU offers 8192". */
export function shortfallText(s: LimitShortfall): string {
  return t('gpu:limits.shortfall', { name: s.name, need: s.need, have: s.have });
}

/** The page's words for a limit shortfall (src/gpu/limits.ts gives the structure): every limit named, with both values. */
export function shortfallMessageText(list: readonly LimitShortfall[]): string {
  return t('gpu:limits.message', { count: list.length, list: list.map(shortfallText).join(t('gpu:limits.separator')) });
}

/** A limit's value as shown: grouped digits, bytes in MiB past 1 MiB, "—" when the adapter does not report it. */
export function limitValue(name: string, v: number): string {
  if (!Number.isFinite(v)) return '—';
  if (/Size$/.test(name) && v >= 1024 * 1024) return t('gpu:about.mib', { value: formatNumber(v / (1024 * 1024), { maximumFractionDigits: 1 }) });
  return formatNumber(v);
}

/** The name/value rows of "About this GPU": the adapter's own words (empty ones left out) and the fallback flag. */
export function aboutRows(a: AboutGpu): { label: string; value: string; fromAdapter: boolean }[] {
  // The adapter's own words (vendor, device, feature names) are shown as it gives them.
  const rows: { label: string; value: string; fromAdapter: boolean }[] = [
    { label: t('gpu:about.vendor'), value: a.vendor, fromAdapter: true },
    { label: t('gpu:about.architecture'), value: a.architecture, fromAdapter: true },
    { label: t('gpu:about.device'), value: a.device, fromAdapter: true },
    { label: t('gpu:about.description'), value: a.description, fromAdapter: true },
  ].filter((r) => r.value.trim().length > 0);
  const fallback = a.fallback === null ? 'fallbackUnknown' : a.fallback ? 'fallbackYes' : 'fallbackNo';
  rows.push({ label: t('gpu:about.fallback'), value: t(`gpu:about.${fallback}`), fromAdapter: false });
  rows.push({
    label: t('gpu:about.features'),
    value: a.features.length > 0 ? a.features.join(t('gpu:about.featureSeparator')) : t('gpu:about.noFeatures'),
    fromAdapter: a.features.length > 0,
  });
  return rows;
}
