// The WebGPU status in the header: checking → ready (in plain words, with a software GPU named as
// such) or a failure. The adapter's name, the kernel self-test's verdict and "About this GPU" (the
// adapter's own description, fallback flag, and each WebGPU limit the page uses) sit in a disclosure.
import { useTranslation } from 'react-i18next';
import { useApp } from '../store/appStore.ts';
import type { AboutGpu } from '../worker/protocol.ts';
import { aboutRows, adapterLabel, limitValue, readyHeadline, type SelftestOk, selftestLine, selftestWhat, softwareAdapter } from './gpuStatusText.ts';
import './gpuStatus.css';

export function GpuStatusBadge() {
  const { t } = useTranslation('gpu');
  const gpu = useApp((s) => s.gpu);
  const backend = useApp((s) => s.backend);
  if (gpu.kind === 'checking') {
    return (
      <div className="gpu-status checking" role="status" data-testid="gpu-status">
        <span className="dot" /> {t('status.checking')}
      </div>
    );
  }
  if (gpu.kind === 'ready') return <ReadyBadge r={gpu.result} />;
  const label = t(backend === 'cpu' ? 'status.cpuBackend' : gpu.kind === 'unavailable' ? 'status.unavailable' : 'status.error');
  return (
    <div className="gpu-status bad" role="status" data-testid="gpu-status">
      <span className="dot" /> {label}
    </div>
  );
}

function ReadyBadge({ r }: { r: SelftestOk }) {
  // The text builders below read the language at call time; this hook re-renders on a switch.
  const { t } = useTranslation('gpu');
  const software = softwareAdapter(r.adapter) !== null;
  const tone = !r.passed ? 'bad' : software ? 'ok software' : 'ok';
  return (
    <div className={`gpu-status ${tone}`} role="status" data-testid="gpu-status">
      <span className="dot" />
      <span className="gpu-headline" data-testid="gpu-headline">
        {readyHeadline(r)}
      </span>
      <details className="gpu-details">
        <summary aria-label={t('status.detailsLabel')} title={t('status.detailsLabel')}>
          <span aria-hidden="true">i</span>
        </summary>
        <dl className="gpu-details-panel">
          <dt>{t('status.adapter')}</dt>
          <dd data-testid="gpu-adapter" translate="no">
            {adapterLabel(r.adapter)}
          </dd>
          <dt>{t('status.selftest')}</dt>
          <dd>
            <span data-testid="gpu-selftest">{selftestLine(r)}</span>
            <br />
            <span className="muted">{selftestWhat(r)}</span>
          </dd>
          {software ? <dd className="gpu-software-why">{t('status.softwareWhy')}</dd> : null}
          {r.about ? <AboutThisGpu about={r.about} /> : null}
        </dl>
      </details>
    </div>
  );
}

/** The adapter's self-description and the limits the page requested next to the adapter's values. */
function AboutThisGpu({ about }: { about: AboutGpu }) {
  const { t } = useTranslation('gpu');
  return (
    <dd className="gpu-about" data-testid="gpu-about">
      <section aria-labelledby="gpu-about-title">
        <h3 id="gpu-about-title">{t('about.title')}</h3>
        <dl className="gpu-about-info">
          {aboutRows(about).map((row) => (
            <div key={row.label}>
              <dt>{row.label}</dt>
              <dd translate={row.fromAdapter ? 'no' : undefined}>{row.value}</dd>
            </div>
          ))}
        </dl>
        <table className="gpu-limits" data-testid="gpu-limits">
          <caption>{t('about.limitsCaption')}</caption>
          <thead>
            <tr>
              <th scope="col">{t('about.limitHead')}</th>
              <th scope="col">{t('about.needHead')}</th>
              <th scope="col">{t('about.requestedHead')}</th>
              <th scope="col">{t('about.adapterHead')}</th>
            </tr>
          </thead>
          <tbody>
            {about.limits.map((l) => (
              <tr key={l.name}>
                <th scope="row">{l.name}</th>
                <td>{limitValue(l.name, l.need)}</td>
                <td>{limitValue(l.name, l.requested)}</td>
                <td>{limitValue(l.name, l.adapter)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>
    </dd>
  );
}
