// Adapter and device acquisition with specific, user-facing errors.
import { type LimitRow, type LimitShortfall, limitRows, limitShortfalls, requestedLimits, shortfallMessage } from './limits.ts';

/** Why WebGPU could not be used; the page shows a tailored explanation for each. */
export type GpuUnavailableReason = 'no-navigator-gpu' | 'no-adapter' | 'limit-too-small' | 'device-failed';

export class GpuUnavailableError extends Error {
  constructor(
    readonly reason: GpuUnavailableReason,
    message: string,
    /** For 'limit-too-small': each limit the adapter lacks, with both values. */
    readonly shortfalls: readonly LimitShortfall[] = [],
    /** For 'device-failed': the browser's own words for why (the page puts them in its sentence). */
    readonly browserError?: string,
  ) {
    super(message);
    this.name = 'GpuUnavailableError';
  }
}

/** What the page shows about the adapter ("About this GPU"): its names, whether it is a fallback
 *  (software) adapter, and each limit the page relies on with the value requested and offered. */
export interface AboutGpu {
  vendor: string;
  architecture: string;
  device: string;
  description: string;
  /** The adapter says it is a fallback adapter (e.g. a software rasteriser); null when it does not say. */
  fallback: boolean | null;
  limits: LimitRow[];
  /** The optional features the device was created with. */
  features: string[];
}

export interface AcquiredDevice {
  adapter: GPUAdapter;
  device: GPUDevice;
  /** Human-readable adapter name, e.g. "google swiftshader" or "nvidia ... ". */
  adapterName: string;
  about: AboutGpu;
}

export interface AcquireOptions {
  /** The GPU entry point; defaults to `navigator.gpu`. Node passes Dawn's. */
  gpu?: GPU;
  powerPreference?: GPUPowerPreference;
  /** Optional features to enable when the adapter has them (the page asks for none; benchmarks ask for 'timestamp-query'). */
  optionalFeatures?: readonly GPUFeatureName[];
  /** Called once if the device is lost after acquisition (driver reset, tab backgrounded, ...). */
  onLost?: (info: GPUDeviceLostInfo) => void;
}

export function describeAdapter(adapter: GPUAdapter): string {
  const info = adapter.info;
  const parts = [info?.vendor, info?.architecture, info?.device, info?.description].filter((s) => !!s);
  return parts.length > 0 ? parts.join(' ') : 'unknown adapter';
}

/** The adapter's self-description and limits, for the page's "About this GPU" panel. */
export function aboutAdapter(adapter: GPUAdapter, features: readonly string[] = []): AboutGpu {
  const info = adapter.info as (GPUAdapterInfo & { isFallbackAdapter?: boolean }) | undefined;
  // isFallbackAdapter moved from the adapter to adapter.info (Chrome 136); read either.
  const flag = info?.isFallbackAdapter ?? (adapter as GPUAdapter & { isFallbackAdapter?: boolean }).isFallbackAdapter;
  return {
    vendor: info?.vendor ?? '',
    architecture: info?.architecture ?? '',
    device: info?.device ?? '',
    description: info?.description ?? '',
    fallback: typeof flag === 'boolean' ? flag : null,
    limits: limitRows(adapter.limits),
    features: [...features],
  };
}

export async function acquireDevice(opts: AcquireOptions = {}): Promise<AcquiredDevice> {
  const gpu = opts.gpu ?? (typeof navigator !== 'undefined' ? (navigator as Navigator).gpu : undefined);
  if (!gpu) {
    throw new GpuUnavailableError(
      'no-navigator-gpu',
      'This browser does not expose WebGPU (navigator.gpu is undefined): it is too old, or WebGPU is switched off ' +
        '(Chrome and Edge on Linux: chrome://flags/#enable-unsafe-webgpu; Firefox outside Windows and Apple-silicon Macs: about:config dom.webgpu.enabled), ' +
        'or the page is not served over https or localhost.',
    );
  }
  const adapter = await gpu.requestAdapter({ powerPreference: opts.powerPreference ?? 'high-performance' });
  if (!adapter) {
    throw new GpuUnavailableError(
      'no-adapter',
      'WebGPU is present but no GPU adapter was found (requestAdapter returned null). The GPU may be blocklisted ' +
        'or hardware acceleration disabled: check chrome://gpu and enable "Use graphics acceleration when available".',
    );
  }
  const shortfalls = limitShortfalls(adapter.limits);
  if (shortfalls.length > 0) throw new GpuUnavailableError('limit-too-small', shortfallMessage(shortfalls), shortfalls);
  const requiredLimits = requestedLimits(adapter.limits);
  const requiredFeatures = (opts.optionalFeatures ?? []).filter((f) => adapter.features.has(f));
  let device: GPUDevice;
  try {
    device = await adapter.requestDevice({ requiredLimits, requiredFeatures });
  } catch (e) {
    throw new GpuUnavailableError('device-failed', `The GPU adapter refused to create a device: ${String(e)}`, [], String(e));
  }
  if (opts.onLost) {
    const onLost = opts.onLost;
    void device.lost.then((info) => onLost(info));
  }
  return { adapter, device, adapterName: describeAdapter(adapter), about: aboutAdapter(adapter, requiredFeatures) };
}
