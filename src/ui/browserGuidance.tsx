// How to switch WebGPU on, one section per engine family: the student's own browser first, the
// others in a disclosure. Versions and switches as of 2026, from the gpuweb implementation-status
// wiki (https://github.com/gpuweb/gpuweb/wiki/Implementation-Status, revision of April 2026) and
// MDN's browser-compat-data for WebGPU (api/GPU*.json: Chrome 113 on ChromeOS/macOS/Windows,
// Chrome 144 on Linux for Intel Gen12+, Chrome Android 121, Firefox 141 on Windows, 145 on macOS
// Tahoe on Apple silicon, 147 on older macOS on Apple silicon, Safari and Safari on iOS 26).
import type { ReactNode } from 'react';
import { type BrowserGuess, guidanceOrder } from './browserGuess.ts';

type Family = 'chromium' | 'firefox' | 'safari';

const TITLES: Record<Family, string> = {
  chromium: 'Chrome, Edge and other Chromium browsers',
  firefox: 'Firefox',
  safari: 'Safari on macOS, iPadOS and iOS',
};

const STEPS: Record<Family, ReactNode> = {
  chromium: (
    <ol>
      <li>
        Use Chrome or Edge <strong>113 or newer</strong>: WebGPU is on by default on Windows, macOS and ChromeOS, and on Android (12 or newer) since version 121.
      </li>
      <li>
        On <strong>Linux</strong> it is on by default only for some GPUs (Intel Gen12 or newer since 144, NVIDIA with a recent driver since 147). Otherwise open{' '}
        <code>chrome://flags/#enable-unsafe-webgpu</code> (in Edge <code>edge://flags/#enable-unsafe-webgpu</code>), set it to <em>Enabled</em>, and start the browser with{' '}
        <code>--enable-features=Vulkan</code>.
      </li>
      <li>
        Check <strong>Settings → System → “Use graphics acceleration when available”</strong> is on, then relaunch.
      </li>
      <li>
        Open <code>chrome://gpu</code> and look for <em>WebGPU: Hardware accelerated</em>. If your GPU is blocklisted there, <code>chrome://flags/#ignore-gpu-blocklist</code> may
        help.
      </li>
    </ol>
  ),
  firefox: (
    <ol>
      <li>
        WebGPU is on by default in Firefox <strong>141 or newer on Windows</strong>, and on Macs with Apple silicon since 145 (macOS 26) or 147 (older macOS).
      </li>
      <li>
        On Linux, Android and Intel Macs it is not on yet in release builds: open <code>about:config</code>, set <code>dom.webgpu.enabled</code> to <em>true</em>, and reload
        (experimental there; Firefox Nightly has it on).
      </li>
      <li>
        Check <strong>Settings → General → Performance</strong>: hardware acceleration must be allowed.
      </li>
    </ol>
  ),
  safari: (
    <ol>
      <li>
        WebGPU is on by default in <strong>Safari 26</strong> on macOS, iPadOS and iOS: update the system to get it.
      </li>
      <li>
        In earlier Safari on a Mac: turn on <em>Settings → Advanced → “Show features for web developers”</em>, then <strong>Develop → Feature Flags → WebGPU</strong>, and reload.
      </li>
      <li>
        On an iPhone or iPad with iOS 17 or 18: <strong>Settings → Apps → Safari → Advanced → Feature Flags → WebGPU</strong>. Every browser there uses Safari’s engine, so this
        also applies to Chrome and Firefox on iOS.
      </li>
    </ol>
  ),
};

function Section({ family, mine, first }: { family: Family; mine: boolean; first: boolean }) {
  return (
    <section className="browser-guide" data-testid={`guide-${family}`} aria-labelledby={`guide-${family}-title`}>
      <h4 id={`guide-${family}-title`}>
        {first && mine ? 'Your browser: ' : ''}
        {TITLES[family]}
      </h4>
      {STEPS[family]}
    </section>
  );
}

/** The guide for `browser`'s family first, the other two in a closed disclosure. */
export function BrowserGuidance({ browser }: { browser: BrowserGuess }) {
  const [first, ...rest] = guidanceOrder(browser.family);
  return (
    <div className="browser-guidance" data-testid="browser-guidance" data-browser={browser.family}>
      <Section family={first} mine={browser.family !== 'other'} first />
      <details className="other-browsers">
        <summary>Using another browser? {rest.map((f) => TITLES[f]).join(' · ')}</summary>
        {rest.map((f) => (
          <Section key={f} family={f} mine={false} first={false} />
        ))}
      </details>
      <p className="hint">
        In every browser, WebGPU is only available on secure pages: open the playground over <code>https://</code> or from <code>localhost</code>.
      </p>
    </div>
  );
}
