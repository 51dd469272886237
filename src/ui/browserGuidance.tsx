// How to switch WebGPU on, one section per engine family: the student's own browser first, the
// others in a disclosure. Versions and switches as of 2026, from the gpuweb implementation-status
// wiki (https://github.com/gpuweb/gpuweb/wiki/Implementation-Status, revision of April 2026) and
// MDN's browser-compat-data for WebGPU (api/GPU*.json: Chrome 113 on ChromeOS/macOS/Windows,
// Chrome 144 on Linux for Intel Gen12+, Chrome Android 121, Firefox 141 on Windows, 145 on macOS
// Tahoe on Apple silicon, 147 on older macOS on Apple silicon, Safari and Safari on iOS 26).
import { Trans, useTranslation } from 'react-i18next';
import { type BrowserGuess, guidanceOrder } from './browserGuess.ts';

type Family = 'chromium' | 'firefox' | 'safari';

/** Each family's steps, in order: keys of gpu:guide.<family>.<step>. */
const STEPS: Record<Family, readonly string[]> = {
  chromium: ['version', 'linux', 'acceleration', 'check'],
  firefox: ['version', 'flag', 'acceleration'],
  safari: ['version', 'mac', 'ios'],
};

/** The markup a step may hold around its words. */
const MARKUP = { b: <strong />, code: <code />, em: <em /> };

function Section({ family, mine, first }: { family: Family; mine: boolean; first: boolean }) {
  const { t } = useTranslation('gpu');
  const title = t(`guide.title.${family}`);
  return (
    <section className="browser-guide" data-testid={`guide-${family}`} aria-labelledby={`guide-${family}-title`}>
      <h4 id={`guide-${family}-title`}>{first && mine ? t('guide.yourBrowser', { title }) : title}</h4>
      <ol>
        {STEPS[family].map((step) => (
          <li key={step}>
            <Trans i18nKey={`guide.${family}.${step}`} ns="gpu" components={MARKUP} />
          </li>
        ))}
      </ol>
    </section>
  );
}

/** The guide for `browser`'s family first, the other two in a closed disclosure. */
export function BrowserGuidance({ browser }: { browser: BrowserGuess }) {
  const { t } = useTranslation('gpu');
  const [first, ...rest] = guidanceOrder(browser.family);
  return (
    <div className="browser-guidance" data-testid="browser-guidance" data-browser={browser.family}>
      <Section family={first} mine={browser.family !== 'other'} first />
      <details className="other-browsers">
        <summary>{t('guide.otherBrowsers', { list: rest.map((f) => t(`guide.title.${f}`)).join(' · ') })}</summary>
        {rest.map((f) => (
          <Section key={f} family={f} mine={false} first={false} />
        ))}
      </details>
      <p className="hint">
        <Trans i18nKey="guide.secureOnly" ns="gpu" components={MARKUP} />
      </p>
    </div>
  );
}
