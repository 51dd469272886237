// Shown instead of the playground when WebGPU cannot be used: why (each WebGPU limit the GPU lacks
// named with both values), how to switch WebGPU on in this browser (the others a click away), and
// the slow CPU fallback. A blank page is the worst answer to a missing GPU.
import { useMemo } from 'react';
import { useApp, type GpuStatus } from '../store/appStore.ts';
import { SMALL_CPU_PRESET } from '../rl/presets.ts';
import type { LimitShortfall } from '../worker/protocol.ts';
import { currentBrowser } from './browserGuess.ts';
import { shortfallText } from './gpuStatusText.ts';
import { BrowserGuidance } from './browserGuidance.tsx';
import './noWebGpu.css';

/** Why the self-test said no (the reasons the gpu layer names), or a failed self-test. */
type Reason = Extract<GpuStatus, { kind: 'unavailable' }>['reason'] | 'error';

const HEADLINES: Record<Reason, string> = {
  'no-navigator-gpu': 'This browser does not offer WebGPU',
  'no-adapter': 'WebGPU is switched on, but no GPU adapter was found',
  'limit-too-small': 'This GPU is too limited for the playground',
  'device-failed': 'The GPU refused to start a WebGPU device',
  error: 'The WebGPU self-test failed',
};

export function NoWebGpu({ reason, message, shortfalls = [] }: { reason: Reason; message: string; shortfalls?: readonly LimitShortfall[] }) {
  const setBackend = useApp((s) => s.setBackend);
  const browser = useMemo(currentBrowser, []);
  const chooseCpu = () => {
    const s = useApp.getState();
    s.applyConfig({ ...s.config, ...SMALL_CPU_PRESET });
    setBackend('cpu');
  };
  return (
    <section className="no-webgpu card" aria-labelledby="no-webgpu-title" data-testid="no-webgpu">
      <h2 id="no-webgpu-title">{HEADLINES[reason]}</h2>
      <p className="lead">
        PPO Playground trains a small transformer on your own GPU through <strong>WebGPU</strong>. Without it the page cannot run the GPU kernels — nothing is broken, your browser
        just needs WebGPU turned on.
      </p>
      <p className="detail" data-testid="no-webgpu-reason">
        <strong>What happened:</strong> {message}
      </p>
      {shortfalls.length > 0 ? (
        <ul className="limit-shortfalls" data-testid="no-webgpu-limits">
          {shortfalls.map((l) => (
            <li key={l.name}>{shortfallText(l)}</li>
          ))}
        </ul>
      ) : null}
      <h3>How to enable WebGPU</h3>
      <BrowserGuidance browser={browser} />
      <div className="fallback">
        <button type="button" className="btn primary" onClick={chooseCpu}>
          Run the small preset on the CPU reference backend (slow)
        </button>
        <p className="hint">
          The CPU backend computes the same maths in float64 JavaScript. It is the test oracle, not a fast path: expect a small model and minutes per iteration.
        </p>
      </div>
    </section>
  );
}
