// The header badge in plain words: a software GPU is named as such (and why it is slower), a
// hardware adapter by its name, a failed self-test said outright; the numbers go to the details.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { switchLocale } from '../../src/i18n/index.ts';
import { shortfallMessage } from '../../src/gpu/limits.ts';
import {
  aboutRows,
  adapterLabel,
  limitValue,
  readyHeadline,
  type SelftestOk,
  selftestLine,
  shortfallMessageText,
  shortfallText,
  softwareAdapter,
} from '../../src/ui/gpuStatusText.ts';

const result = (adapter: string, passed = true, maxAbsErr = 9.4e-8): SelftestOk => ({
  type: 'selftest-ok',
  adapter,
  backendLabel: 'WebGPU',
  kernel: 'ppo_loss',
  values: [1, 2],
  reference: [1, 2],
  maxAbsErr,
  passed,
  tolerance: 1e-4,
  ms: 12,
});

describe('WebGPU status text', () => {
  it('names software adapters', () => {
    expect(softwareAdapter('google swiftshader')).toBe('SwiftShader');
    expect(softwareAdapter('mesa llvmpipe (LLVM 15.0.6, 256 bits)')).toBe('llvmpipe');
    expect(softwareAdapter('Microsoft Basic Render Driver')).toBe('WARP');
    expect(softwareAdapter('nvidia ampere')).toBeNull();
    expect(softwareAdapter('')).toBeNull();
  });

  it('says "software GPU" for SwiftShader and the adapter name for a real GPU', () => {
    expect(readyHeadline(result('google swiftshader'))).toBe('WebGPU ready · software GPU (SwiftShader): slower than a real GPU');
    expect(readyHeadline(result('nvidia ampere'))).toBe('WebGPU ready · nvidia ampere');
    expect(readyHeadline(result('apple m2', false))).toContain('kernel self-test FAILED');
  });

  it('keeps the verdict and the error for the details, whatever the numbers', () => {
    expect(selftestLine(result('x'))).toBe('kernel self-test passed (max |err| 9.4e-8)');
    expect(selftestLine(result('x', false, Number.NaN))).toBe('kernel self-test FAILED (max |err| NaN)');
  });

  it('never shows an empty or endless adapter name', () => {
    expect(adapterLabel('  ')).toBe('unknown adapter');
    expect(adapterLabel('a'.repeat(200)).length).toBe(60);
    expect(adapterLabel(' intel  xe ')).toBe('intel xe');
  });

  it('names a missing limit with the needed and offered values', () => {
    expect(shortfallText({ name: 'maxComputeWorkgroupStorageSize', need: 16384, have: 8192 })).toBe('maxComputeWorkgroupStorageSize: this page needs 16384, your GPU offers 8192');
    // The page words the shortfall from its structure, as the gpu layer's English message does.
    const one = [{ name: 'maxComputeWorkgroupStorageSize' as const, need: 15360, have: 8192 }];
    const two = [...one, { name: 'maxStorageBuffersPerShaderStage' as const, need: 8, have: 4 }];
    expect(shortfallMessageText(one)).toBe(shortfallMessage(one));
    expect(shortfallMessageText(two)).toBe(shortfallMessage(two));
  });

  it('shows limit values readably: sizes past 1 MiB in MiB, counts grouped, unreported as a dash', () => {
    expect(limitValue('maxStorageBufferBindingSize', 134217728)).toBe('128 MiB');
    expect(limitValue('maxBufferSize', 4294967296)).toBe('4,096 MiB');
    expect(limitValue('maxComputeWorkgroupStorageSize', 16384)).toBe('16,384');
    expect(limitValue('maxComputeWorkgroupsPerDimension', 65535)).toBe('65,535');
    expect(limitValue('maxBufferSize', Number.NaN)).toBe('—');
  });

  it('lists the adapter’s own words in "About this GPU", leaving out the empty ones', () => {
    const rows = aboutRows({ vendor: 'google', architecture: 'swiftshader', device: '', description: '', fallback: true, limits: [], features: [] });
    expect(rows).toEqual([
      { label: 'Vendor', value: 'google', fromAdapter: true },
      { label: 'Architecture', value: 'swiftshader', fromAdapter: true },
      { label: 'Fallback adapter', value: 'yes: a fallback (often software) adapter, slower than a graphics card', fromAdapter: false },
      { label: 'Optional features', value: 'none requested', fromAdapter: false },
    ]);
    const unknown = aboutRows({ vendor: '', architecture: '', device: '', description: '', fallback: null, limits: [], features: ['timestamp-query'] });
    expect(unknown).toEqual([
      { label: 'Fallback adapter', value: 'not reported by this browser', fromAdapter: false },
      { label: 'Optional features', value: 'timestamp-query', fromAdapter: true },
    ]);
  });
});

describe('WebGPU status text in Chinese', () => {
  beforeAll(() => switchLocale('zh-CN'));
  afterAll(() => switchLocale('en'));

  it('words the badge, the self-test and a shortfall from the same values', () => {
    expect(readyHeadline(result('google swiftshader'))).toBe('WebGPU 就绪 · 软件 GPU（SwiftShader）：比真实 GPU 慢');
    expect(selftestLine(result('x'))).toBe('内核自检通过（最大绝对误差 9.4e-8）');
    const two = [
      { name: 'maxComputeWorkgroupStorageSize' as const, need: 15360, have: 8192 },
      { name: 'maxStorageBuffersPerShaderStage' as const, need: 8, have: 4 },
    ];
    expect(shortfallMessageText(two)).toBe(
      '这块 GPU 有 2 项 WebGPU 限制低于本页所需：maxComputeWorkgroupStorageSize：本页需要 15360，你的 GPU 只提供 8192；maxStorageBuffersPerShaderStage：本页需要 8，你的 GPU 只提供 4。',
    );
    expect(limitValue('maxBufferSize', 4294967296)).toBe('4,096 MiB');
  });
});
