// The page requests exactly the WebGPU limits its kernels need (max of the need and the default),
// all the adapter offers for the two buffer sizes (bigger runs use them), and names each limit an
// adapter lacks with both values.
import { describe, expect, it } from 'vitest';
import { LIMIT_NEEDS, limitRows, limitShortfalls, requestedLimits, shortfallLine, shortfallMessage } from '../../src/gpu/limits.ts';

/** WebGPU's default limits (the spec's table) for the ones the page uses. */
const DEFAULTS: Record<string, number> = {
  maxComputeInvocationsPerWorkgroup: 256,
  maxComputeWorkgroupSizeX: 256,
  maxComputeWorkgroupSizeY: 256,
  maxComputeWorkgroupStorageSize: 16384,
  maxComputeWorkgroupsPerDimension: 65535,
  maxStorageBuffersPerShaderStage: 8,
  maxStorageBufferBindingSize: 134217728,
  maxBufferSize: 268435456,
};

/** A desktop GPU: more of everything. */
const BIG = {
  ...DEFAULTS,
  maxComputeInvocationsPerWorkgroup: 1024,
  maxComputeWorkgroupStorageSize: 32768,
  maxStorageBuffersPerShaderStage: 10,
  maxStorageBufferBindingSize: 2147483644,
  maxBufferSize: 4294967296,
};

describe('WebGPU limits', () => {
  it('needs nothing above the WebGPU defaults, so every conforming adapter qualifies', () => {
    for (const l of LIMIT_NEEDS) {
      expect(l.standard).toBe(DEFAULTS[l.name]);
      expect(l.need).toBeLessThanOrEqual(l.standard);
    }
    expect(limitShortfalls(DEFAULTS)).toEqual([]);
  });

  it('requests max(need, default), and all the adapter offers only for the buffer sizes', () => {
    expect(requestedLimits(BIG)).toEqual({ ...DEFAULTS, maxStorageBufferBindingSize: 2147483644, maxBufferSize: 4294967296 });
    expect(requestedLimits(DEFAULTS)).toEqual(DEFAULTS);
  });

  it('names each limit an adapter lacks, with the needed and offered values', () => {
    const small = { ...DEFAULTS, maxComputeWorkgroupStorageSize: 8192, maxComputeInvocationsPerWorkgroup: 128 };
    const list = limitShortfalls(small);
    expect(list).toEqual([
      { name: 'maxComputeInvocationsPerWorkgroup', need: 256, have: 128 },
      { name: 'maxComputeWorkgroupStorageSize', need: 15360, have: 8192 },
    ]);
    expect(shortfallLine(list[1])).toBe('maxComputeWorkgroupStorageSize: this page needs 15360, your GPU offers 8192');
    expect(shortfallMessage(list)).toBe(
      'This GPU offers less than the playground needs in 2 WebGPU limits: maxComputeInvocationsPerWorkgroup: this page needs 256, your GPU offers 128; ' +
        'maxComputeWorkgroupStorageSize: this page needs 15360, your GPU offers 8192.',
    );
  });

  it('treats an unreported limit as its default', () => {
    expect(limitShortfalls({})).toEqual([]);
    expect(requestedLimits({})).toEqual(DEFAULTS);
  });

  it('lists each limit with its need, the request and the adapter’s value for the About panel', () => {
    const rows = limitRows(BIG);
    expect(rows.map((r) => r.name)).toEqual(LIMIT_NEEDS.map((l) => l.name));
    expect(rows.find((r) => r.name === 'maxComputeWorkgroupStorageSize')).toEqual({ name: 'maxComputeWorkgroupStorageSize', need: 15360, requested: 16384, adapter: 32768 });
  });
});
