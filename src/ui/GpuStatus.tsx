// The WebGPU status in the header: checking → ready (in plain words, with a software GPU named as
// such) or a failure. The adapter's name and the kernel self-test's verdict sit in a disclosure.
import { useApp } from '../store/appStore.ts';
import { adapterLabel, GPU_STATUS_TEXT as T, readyHeadline, type SelftestOk, selftestLine, softwareAdapter } from './gpuStatusText.ts';
import './gpuStatus.css';

export function GpuStatusBadge() {
  const gpu = useApp((s) => s.gpu);
  const backend = useApp((s) => s.backend);
  if (gpu.kind === 'checking') {
    return (
      <div className="gpu-status checking" role="status" data-testid="gpu-status">
        <span className="dot" /> {T.checking}
      </div>
    );
  }
  if (gpu.kind === 'ready') return <ReadyBadge r={gpu.result} />;
  const label = backend === 'cpu' ? T.cpuBackend : gpu.kind === 'unavailable' ? T.unavailable : T.error;
  return (
    <div className="gpu-status bad" role="status" data-testid="gpu-status">
      <span className="dot" /> {label}
    </div>
  );
}

function ReadyBadge({ r }: { r: SelftestOk }) {
  const software = softwareAdapter(r.adapter) !== null;
  const tone = !r.passed ? 'bad' : software ? 'ok software' : 'ok';
  return (
    <div className={`gpu-status ${tone}`} role="status" data-testid="gpu-status">
      <span className="dot" />
      <span className="gpu-headline" data-testid="gpu-headline">
        {readyHeadline(r)}
      </span>
      <details className="gpu-details">
        <summary aria-label={T.detailsLabel} title={T.detailsLabel}>
          <span aria-hidden="true">i</span>
        </summary>
        <dl className="gpu-details-panel">
          <dt>{T.adapter}</dt>
          <dd data-testid="gpu-adapter">{adapterLabel(r.adapter)}</dd>
          <dt>{T.selftest}</dt>
          <dd>
            <span data-testid="gpu-selftest">{selftestLine(r)}</span>
            <br />
            <span className="muted">{T.selftestWhat(r)}</span>
          </dd>
          {software ? <dd className="gpu-software-why">{T.softwareWhy}</dd> : null}
        </dl>
      </details>
    </div>
  );
}
