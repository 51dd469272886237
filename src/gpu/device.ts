// Adapter and device acquisition with specific, user-facing errors.

/** Why WebGPU could not be used; the page shows a tailored explanation for each. */
export type GpuUnavailableReason = 'no-navigator-gpu' | 'no-adapter' | 'limit-too-small' | 'device-failed';

export class GpuUnavailableError extends Error {
  constructor(
    readonly reason: GpuUnavailableReason,
    message: string,
  ) {
    super(message);
    this.name = 'GpuUnavailableError';
  }
}

/** Limits the kernels rely on. SwiftShader offers exactly these; every desktop GPU offers more. */
export const REQUIRED_LIMITS = {
  maxComputeInvocationsPerWorkgroup: 256,
  maxComputeWorkgroupSizeX: 256,
  maxComputeWorkgroupStorageSize: 16384,
  maxStorageBuffersPerShaderStage: 8,
} as const;

/** Limits we ask for when the adapter has them (bigger models, fewer splits). */
const WANTED_LIMITS = [
  'maxStorageBufferBindingSize',
  'maxBufferSize',
  'maxComputeWorkgroupStorageSize',
  'maxStorageBuffersPerShaderStage',
  'maxComputeWorkgroupsPerDimension',
] as const;

export interface AcquiredDevice {
  adapter: GPUAdapter;
  device: GPUDevice;
  /** Human-readable adapter name, e.g. "google swiftshader" or "nvidia ... ". */
  adapterName: string;
}

export interface AcquireOptions {
  /** The GPU entry point; defaults to `navigator.gpu`. Node passes Dawn's. */
  gpu?: GPU;
  powerPreference?: GPUPowerPreference;
  /** Called once if the device is lost after acquisition (driver reset, tab backgrounded, ...). */
  onLost?: (info: GPUDeviceLostInfo) => void;
}

export function describeAdapter(adapter: GPUAdapter): string {
  const info = adapter.info;
  const parts = [info?.vendor, info?.architecture, info?.device, info?.description].filter((s) => !!s);
  return parts.length > 0 ? parts.join(' ') : 'unknown adapter';
}

export async function acquireDevice(opts: AcquireOptions = {}): Promise<AcquiredDevice> {
  const gpu = opts.gpu ?? (typeof navigator !== 'undefined' ? (navigator as Navigator).gpu : undefined);
  if (!gpu) {
    throw new GpuUnavailableError(
      'no-navigator-gpu',
      'This browser does not expose WebGPU (navigator.gpu is undefined). Use a recent Chrome or Edge; ' +
        'on Linux enable chrome://flags/#enable-unsafe-webgpu, and make sure the page is served over https or localhost.',
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
  for (const [name, need] of Object.entries(REQUIRED_LIMITS)) {
    const have = (adapter.limits as unknown as Record<string, number>)[name];
    if (have < need) {
      throw new GpuUnavailableError('limit-too-small', `This GPU's WebGPU limit ${name} is ${have}, but the playground needs at least ${need}.`);
    }
  }
  const requiredLimits: Record<string, number> = { ...REQUIRED_LIMITS };
  for (const name of WANTED_LIMITS) {
    requiredLimits[name] = (adapter.limits as unknown as Record<string, number>)[name];
  }
  const requiredFeatures: GPUFeatureName[] = [];
  if (adapter.features.has('timestamp-query')) requiredFeatures.push('timestamp-query');
  let device: GPUDevice;
  try {
    device = await adapter.requestDevice({ requiredLimits, requiredFeatures });
  } catch (e) {
    throw new GpuUnavailableError('device-failed', `The GPU adapter refused to create a device: ${String(e)}`);
  }
  if (opts.onLost) {
    const onLost = opts.onLost;
    void device.lost.then((info) => onLost(info));
  }
  return { adapter, device, adapterName: describeAdapter(adapter) };
}
