// The lighter default batch on an adapter with only WebGPU's minimum buffer sizes: chosen only for
// that adapter, only when the batch is still the default and no run exists, and said in a notice.
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { switchLocale } from '../../src/i18n/index.ts';
import { DEFAULT_CHECKED, DEFAULT_CONFIG } from '../../src/rl/config.ts';
import { useApp } from '../../src/store/appStore.ts';
import { applyLighterBatch, LIGHT_PROMPTS_PER_BATCH, lighterDefaultBatch, offersMinimumBuffers } from '../../src/store/lightBatch.ts';
import type { LimitRow } from '../../src/worker/protocol.ts';

const MiB = 1024 * 1024;
const rows = (binding: number, buffer: number): LimitRow[] => [
  { name: 'maxComputeWorkgroupStorageSize', need: 15360, requested: 16384, adapter: 16384 },
  { name: 'maxStorageBufferBindingSize', need: 128 * MiB, requested: binding, adapter: binding },
  { name: 'maxBufferSize', need: 256 * MiB, requested: buffer, adapter: buffer },
];
const PHONE = rows(128 * MiB, 256 * MiB);
const DESKTOP = rows(1024 * MiB, 1024 * MiB);

describe('lighter default batch', () => {
  beforeEach(() => {
    useApp.setState({ config: DEFAULT_CHECKED, runs: [], runState: 'idle', notice: null });
  });
  afterAll(() => switchLocale('en'));

  it('reads the adapter as minimum only when both buffer limits are at WebGPU’s defaults', () => {
    expect(offersMinimumBuffers(PHONE)).toBe(true);
    expect(offersMinimumBuffers(DESKTOP)).toBe(false);
    expect(offersMinimumBuffers(rows(128 * MiB, 1024 * MiB))).toBe(false);
    expect(offersMinimumBuffers([])).toBe(false);
    expect(offersMinimumBuffers(rows(Number.NaN, Number.NaN))).toBe(false);
  });

  it('halves the default prompts per batch and keeps a valid config; leaves a chosen batch alone', () => {
    const light = lighterDefaultBatch(DEFAULT_CONFIG, PHONE);
    expect(light).toEqual({ config: { ...DEFAULT_CONFIG, promptsPerBatch: LIGHT_PROMPTS_PER_BATCH }, from: DEFAULT_CONFIG.promptsPerBatch, to: LIGHT_PROMPTS_PER_BATCH });
    expect(LIGHT_PROMPTS_PER_BATCH).toBe(DEFAULT_CONFIG.promptsPerBatch / 2);
    expect(lighterDefaultBatch(DEFAULT_CONFIG, DESKTOP)).toBeNull();
    expect(lighterDefaultBatch({ ...DEFAULT_CONFIG, promptsPerBatch: 16 }, PHONE)).toBeNull();
    expect(lighterDefaultBatch({ ...DEFAULT_CONFIG, samplesPerPrompt: 8 }, PHONE)).toBeNull();
  });

  it('applies it after the self-test with a notice naming both batches and where to change it', () => {
    expect(applyLighterBatch(PHONE)).toBe(true);
    const s = useApp.getState();
    expect(s.config.promptsPerBatch).toBe(LIGHT_PROMPTS_PER_BATCH);
    expect(s.notice).toEqual({
      tone: 'info',
      text: "This GPU offers WebGPU's minimum buffer sizes (128 MiB a binding), as phones and tablets do: the default batch is lighter, 4 prompts × 4 samples instead of 8 × 4. Settings → Rollout → Prompts per batch changes it.",
    });
  });

  it('does nothing on a larger adapter, with runs kept from a visit, or while training', () => {
    expect(applyLighterBatch(DESKTOP)).toBe(false);
    useApp.setState({ runs: [{ id: 'r1' } as never] });
    expect(applyLighterBatch(PHONE)).toBe(false);
    useApp.setState({ runs: [], runState: 'running' });
    expect(applyLighterBatch(PHONE)).toBe(false);
    expect(useApp.getState().config).toEqual(DEFAULT_CONFIG);
    expect(useApp.getState().notice).toBeNull();
  });

  it('says it in Chinese on a Chinese page', async () => {
    await switchLocale('zh-CN');
    expect(applyLighterBatch(PHONE)).toBe(true);
    expect(useApp.getState().notice?.text).toBe(
      '这块 GPU 只提供 WebGPU 的最小缓冲区（每个绑定 128 MiB），和手机、平板一样：默认批次已减轻为 4 个提示 × 4 个样本（原为 8 × 4）。可在 设置 → 采样 → 每批提示数 中修改。',
    );
  });
});
