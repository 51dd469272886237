// Shown instead of the playground when WebGPU cannot be used: why, how to fix it, and the slow
// CPU fallback. A blank page is the worst answer to a missing GPU.
import { useApp, type GpuStatus } from '../store/appStore.ts';
import { SMALL_CPU_PRESET } from '../rl/presets.ts';

/** Why the self-test said no (the reasons the gpu layer names), or a failed self-test. */
type Reason = Extract<GpuStatus, { kind: 'unavailable' }>['reason'] | 'error';

const HEADLINES: Record<Reason, string> = {
  'no-navigator-gpu': 'This browser does not offer WebGPU',
  'no-adapter': 'WebGPU is switched on, but no GPU adapter was found',
  'limit-too-small': 'This GPU is too limited for the playground',
  'device-failed': 'The GPU refused to start a WebGPU device',
  error: 'The WebGPU self-test failed',
};

export function NoWebGpu({ reason, message }: { reason: Reason; message: string }) {
  const setBackend = useApp((s) => s.setBackend);
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
      <h3>How to enable WebGPU in Chrome or Edge</h3>
      <ol>
        <li>Use a recent Chrome or Edge (version 113 or newer). WebGPU is on by default on Windows, macOS and ChromeOS.</li>
        <li>
          On <strong>Linux</strong>, open <code>chrome://flags/#enable-unsafe-webgpu</code>, set it to <em>Enabled</em> and relaunch the browser.
        </li>
        <li>
          Check <strong>Settings → System → “Use graphics acceleration when available”</strong> is on, then relaunch.
        </li>
        <li>
          Open <code>chrome://gpu</code> and look for <em>WebGPU: Hardware accelerated</em>. If your GPU is blocklisted there,
          <code>chrome://flags/#ignore-gpu-blocklist</code> may help.
        </li>
        <li>
          Serve the page over <code>https://</code> or <code>localhost</code>: WebGPU is only available in secure contexts.
        </li>
      </ol>
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
