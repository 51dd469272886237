// The no-WebGPU page orders its guide by the student's browser: real user-agent strings (and
// Chromium's userAgentData) map to the engine family whose WebGPU switch applies.
import { describe, expect, it } from 'vitest';
import { guessBrowser, guidanceOrder } from '../../src/ui/browserGuess.ts';

const UA = {
  chromeWin: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  edgeWin: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.2903.86',
  chromeLinuxHeadless: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/120.0.6099.28 Safari/537.36',
  chromeOs: 'Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  chromeAndroid: 'Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36',
  opera: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36 OPR/115.0.0.0',
  firefoxWin: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:141.0) Gecko/20100101 Firefox/141.0',
  firefoxLinux: 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0',
  firefoxMac: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10.15; rv:145.0) Gecko/20100101 Firefox/145.0',
  firefoxAndroid: 'Mozilla/5.0 (Android 14; Mobile; rv:131.0) Gecko/131.0 Firefox/131.0',
  safariMac: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/26.0 Safari/605.1.15',
  safariIphone: 'Mozilla/5.0 (iPhone; CPU iPhone OS 18_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.6 Mobile/15E148 Safari/604.1',
  chromeIpad: 'Mozilla/5.0 (iPad; CPU OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/126.0.6478.54 Mobile/15E148 Safari/604.1',
  firefoxIphone: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) FxiOS/127.0 Mobile/15E148 Safari/605.1.15',
};

describe('guessBrowser', () => {
  it.each([
    ['chromeWin', 'chromium', 'Chrome', 131, 'windows'],
    ['edgeWin', 'chromium', 'Edge', 131, 'windows'],
    ['chromeLinuxHeadless', 'chromium', 'Chrome', 120, 'linux'],
    ['chromeOs', 'chromium', 'Chrome', 131, 'chromeos'],
    ['chromeAndroid', 'chromium', 'Chrome', 131, 'android'],
    ['opera', 'chromium', 'Opera', 130, 'windows'],
    ['firefoxWin', 'firefox', 'Firefox', 141, 'windows'],
    ['firefoxLinux', 'firefox', 'Firefox', 128, 'linux'],
    ['firefoxMac', 'firefox', 'Firefox', 145, 'mac'],
    ['firefoxAndroid', 'firefox', 'Firefox', 131, 'android'],
    ['safariMac', 'safari', 'Safari', 26, 'mac'],
    ['safariIphone', 'safari', 'Safari', 18, 'ios'],
    // Every iOS browser is WebKit: Safari's switch is the one that applies.
    ['chromeIpad', 'safari', 'Chrome', null, 'ios'],
    ['firefoxIphone', 'safari', 'Firefox', null, 'ios'],
  ] as const)('%s → %s (%s %s on %s)', (key, family, name, version, platform) => {
    expect(guessBrowser(UA[key])).toEqual({ family, name, version, platform });
  });

  it('prefers userAgentData brands and platform where Chromium offers them', () => {
    const edge = guessBrowser(UA.chromeWin, {
      brands: [
        { brand: 'Chromium', version: '131' },
        { brand: 'Not_A Brand', version: '24' },
        { brand: 'Microsoft Edge', version: '131' },
      ],
      platform: 'Windows',
    });
    expect(edge).toEqual({ family: 'chromium', name: 'Edge', version: 131, platform: 'windows' });
    const chrome = guessBrowser(UA.chromeLinuxHeadless, { brands: [{ brand: 'Google Chrome', version: '138' }], platform: 'Linux' });
    expect(chrome).toEqual({ family: 'chromium', name: 'Chrome', version: 138, platform: 'linux' });
  });

  it('says "other" for something it does not know', () => {
    expect(guessBrowser('curl/8.5.0')).toEqual({ family: 'other', name: 'this browser', version: null, platform: 'other' });
  });
});

describe('guidanceOrder', () => {
  it('puts the student’s family first and keeps the other two', () => {
    expect(guidanceOrder('chromium')).toEqual(['chromium', 'firefox', 'safari']);
    expect(guidanceOrder('firefox')).toEqual(['firefox', 'chromium', 'safari']);
    expect(guidanceOrder('safari')).toEqual(['safari', 'chromium', 'firefox']);
    expect(guidanceOrder('other')).toEqual(['chromium', 'firefox', 'safari']);
  });
});
