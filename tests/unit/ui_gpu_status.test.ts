// The header badge in plain words: a software GPU is named as such (and why it is slower), a
// hardware adapter by its name, a failed self-test said outright; the numbers go to the details.
import { describe, expect, it } from 'vitest';
import { adapterLabel, readyHeadline, type SelftestOk, selftestLine, softwareAdapter } from '../../src/ui/gpuStatusText.ts';

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
});
