// The no-WebGPU page's "What happened" line, rendered: a refused device is worded by the page
// around the browser's own error, in English as the gpu layer says it and in Chinese.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadNamespaces, switchLocale } from '../../src/i18n/index.ts';
import { NoWebGpu } from '../../src/ui/NoWebGpu.tsx';

const reasonLine = (html: string) => /data-testid="no-webgpu-reason">(.*?)<\/p>/s.exec(html)?.[1].replace(/<[^>]+>/g, '') ?? '';
const page = () =>
  renderToStaticMarkup(
    createElement(NoWebGpu, {
      reason: 'device-failed',
      message: 'The GPU adapter refused to create a device: OperationError: out of memory',
      browserError: 'OperationError: out of memory',
    }),
  );

describe('no-WebGPU page: a device the adapter refused', () => {
  beforeAll(() => loadNamespaces(['gpu']));
  afterAll(() => switchLocale('en'));

  it('says in English what the gpu layer says', () => {
    expect(reasonLine(page())).toContain('The GPU adapter refused to create a device: OperationError: out of memory');
  });

  it('says it in Chinese around the browser’s own words', async () => {
    await switchLocale('zh-CN');
    expect(reasonLine(page())).toContain('GPU 适配器拒绝创建设备：OperationError: out of memory');
  });
});
