// Shown instead of the playground when WebGPU cannot be used: why (each WebGPU limit the GPU lacks
// named with both values), how to switch WebGPU on in this browser (the others a click away), and
// the slow CPU fallback. A blank page is the worst answer to a missing GPU.
import { type ReactNode, useMemo, useState } from 'react';
import { Trans, useTranslation } from 'react-i18next';
import { useApp, type GpuStatus } from '../store/appStore.ts';
import { PRESETS, SMALL_CPU_PRESET } from '../rl/presets.ts';
import { ShowResultButton } from './ShowResultButton.tsx';
import { RunFilePicker } from './RunFilePicker.tsx';
import type { LimitShortfall } from '../worker/protocol.ts';
import { currentBrowser } from './browserGuess.ts';
import { shortfallMessageText, shortfallText } from './gpuStatusText.ts';
import { BrowserGuidance } from './browserGuidance.tsx';
import './noWebGpu.css';

/** Why the self-test said no (the reasons the gpu layer names), or a failed self-test. */
type Reason = Extract<GpuStatus, { kind: 'unavailable' }>['reason'] | 'error';

/** Keys of gpu:noWebGpu.headline. */
const HEADLINES: Record<Reason, string> = {
  'no-navigator-gpu': 'noNavigatorGpu',
  'no-adapter': 'noAdapter',
  'limit-too-small': 'limitTooSmall',
  'device-failed': 'deviceFailed',
  error: 'error',
};

/**
 * "What happened", in the visitor's language: the gpu layer's English message says the same for
 * the reasons the page can word itself (the limits from their structure, a refused device around the
 * browser's own error text); a failed self-test shows its message as it came.
 */
function whatHappened(reason: Reason, message: string, shortfalls: readonly LimitShortfall[], browserError?: string): ReactNode {
  const code = { code: <code /> };
  if (reason === 'limit-too-small' && shortfalls.length > 0) return shortfallMessageText(shortfalls);
  if (reason === 'no-navigator-gpu') {
    const secure = typeof window === 'undefined' || window.isSecureContext;
    return <Trans i18nKey={secure ? 'noWebGpu.message.noNavigatorGpu' : 'noWebGpu.message.insecure'} ns="gpu" components={code} />;
  }
  if (reason === 'no-adapter') return <Trans i18nKey="noWebGpu.message.noAdapter" ns="gpu" components={code} />;
  if (reason === 'device-failed' && browserError !== undefined) return <Trans i18nKey="noWebGpu.message.deviceFailed" ns="gpu" values={{ error: browserError }} />;
  return message;
}

export function NoWebGpu({ reason, message, shortfalls = [], browserError }: { reason: Reason; message: string; shortfalls?: readonly LimitShortfall[]; browserError?: string }) {
  const { t } = useTranslation('gpu');
  const setBackend = useApp((s) => s.setBackend);
  const browser = useMemo(currentBrowser, []);
  // Recorded runs opened on an earlier visit are kept with their files: offered first, they need no GPU.
  const kept = useApp((s) => s.runs.filter((r) => r.recorded).length);
  const chooseCpu = () => {
    const s = useApp.getState();
    s.applyConfig({ ...s.config, ...SMALL_CPU_PRESET });
    setBackend('cpu');
  };
  return (
    <section className="no-webgpu card" aria-labelledby="no-webgpu-title" data-testid="no-webgpu">
      <h2 id="no-webgpu-title">{t(`noWebGpu.headline.${HEADLINES[reason]}`)}</h2>
      <p className="lead">
        <Trans i18nKey="noWebGpu.lead" ns="gpu" components={{ b: <strong /> }} />
      </p>
      {kept > 0 ? (
        <p>
          <button type="button" className="btn primary" data-testid="no-webgpu-show-kept" onClick={() => setBackend('cpu')}>
            {t('noWebGpu.showKept', { count: kept })}
          </button>
        </p>
      ) : null}
      <PresetResults onShown={() => setBackend('cpu')} />
      <p className="detail" data-testid="no-webgpu-reason">
        <strong>{t('noWebGpu.whatHappened')}</strong> {whatHappened(reason, message, shortfalls, browserError)}
      </p>
      {shortfalls.length > 0 ? (
        <ul className="limit-shortfalls" data-testid="no-webgpu-limits">
          {shortfalls.map((l) => (
            <li key={l.name}>{shortfallText(l)}</li>
          ))}
        </ul>
      ) : null}
      <h3>{t('noWebGpu.howTo')}</h3>
      <BrowserGuidance browser={browser} />
      <div className="fallback">
        <button type="button" className="btn primary" onClick={chooseCpu}>
          {t('noWebGpu.useCpu')}
        </button>
        <p className="hint">{t('noWebGpu.cpuHint')}</p>
        <OpenRecordedRun onOpened={() => setBackend('cpu')} />
      </div>
    </section>
  );
}

/** A run file needs no GPU: opened here, the page shows its charts and views (on the CPU backend, which trains nothing until asked). */
function OpenRecordedRun({ onOpened }: { onOpened: () => void }) {
  const { t } = useTranslation('gpu');
  const [picked, setRefused] = useState<string | null>(null);
  // A run file the link named (?run=) and the page refused: said here, where a visitor without WebGPU looks.
  const linked = useApp((s) => (s.notice?.tone === 'error' ? s.notice.text : null));
  const refused = picked ?? linked;
  return (
    <>
      <RunFilePicker
        label={t('noWebGpu.openRun')}
        className="btn"
        testId="no-webgpu-open-run"
        onResult={({ run, message, ownModel }) => {
          const opened = run !== null || ownModel === true;
          setRefused(opened ? null : message);
          if (opened) onOpened();
        }}
      />
      <p className="hint">{t('noWebGpu.openRunHint')}</p>
      {refused ? (
        <p className="field-error" role="alert" data-testid="no-webgpu-open-run-error">
          {refused}
        </p>
      ) : null}
    </>
  );
}

/** Every card's recorded run, offered first: they need no GPU and open at once (store/presetResults.ts). */
function PresetResults({ onShown }: { onShown: () => void }) {
  const { t } = useTranslation(['gpu', 'presets']);
  const [refused, setRefused] = useState<string | null>(null);
  return (
    <div className="preset-results" data-testid="no-webgpu-preset-results">
      <h3>{t('gpu:noWebGpu.recordedTitle')}</h3>
      <p className="hint">{t('gpu:noWebGpu.recordedHint')}</p>
      <ul>
        {PRESETS.map((p) => (
          <li key={p.name}>
            <ShowResultButton
              preset={p}
              label={t(`presets:preset.${p.id}.name`)}
              onShown={(runs, message) => {
                setRefused(runs.length === (p.arms?.length || 1) ? null : message);
                if (runs.length > 0) onShown();
              }}
            />
          </li>
        ))}
      </ul>
      {refused ? (
        <p className="field-error" role="alert" data-testid="no-webgpu-preset-result-error">
          {refused}
        </p>
      ) : null}
    </div>
  );
}
