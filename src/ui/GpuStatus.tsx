// The WebGPU status line in the header: checking → ready (adapter + self-test verdict) or a failure.
import { useApp } from '../store/appStore.ts';

export function GpuStatusBadge() {
  const gpu = useApp((s) => s.gpu);
  const backend = useApp((s) => s.backend);
  if (gpu.kind === 'checking') {
    return (
      <div className="gpu-status checking" role="status" data-testid="gpu-status">
        <span className="dot" /> Checking WebGPU…
      </div>
    );
  }
  if (gpu.kind === 'ready') {
    const r = gpu.result;
    const verdict = r.passed ? 'kernel self-test passed' : 'kernel self-test FAILED';
    return (
      <div
        className={`gpu-status ${r.passed ? 'ok' : 'bad'}`}
        role="status"
        data-testid="gpu-status"
        title={`${r.kernel}: ${r.values.length} values vs float64 reference, tolerance ${r.tolerance} (relative), ${r.ms.toFixed(0)} ms`}
      >
        <span className="dot" /> WebGPU ready — {r.adapter} — {verdict} (max |err| {r.maxAbsErr.toExponential(1)})
      </div>
    );
  }
  const label = backend === 'cpu' ? 'CPU reference backend (slow)' : gpu.kind === 'unavailable' ? 'WebGPU unavailable' : 'WebGPU error';
  return (
    <div className="gpu-status bad" role="status" data-testid="gpu-status">
      <span className="dot" /> {label}
    </div>
  );
}
