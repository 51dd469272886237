// The installed Chromium the e2e tests and the page bench drive, and its flags. Browsers are never
// downloaded: PPO_CHROMIUM points at an installed Chromium (default: the Debian package).

export const CHROMIUM_PATH = process.env.PPO_CHROMIUM ?? '/usr/bin/chromium';

/**
 * Compositing in software: through SwiftShader's GL it cost a third more CPU per page load and
 * twice as much per scrolled frame (2 cores, scripts/page-load-cost.ts); WebGPU still runs on
 * SwiftShader's Vulkan. The screenshot baselines keep GL compositing: software raster placed the
 * charts' antialiased strokes one of two ways from run to run.
 */
export const SOFTWARE_COMPOSITING = '--disable-gpu-compositing';

/** Flags for headless WebGPU on a machine without a GPU (root in CI, no network). */
export const CHROMIUM_ARGS = [
  '--enable-unsafe-webgpu',
  '--no-sandbox',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--use-angle=swiftshader',
  '--enable-features=Vulkan',
  SOFTWARE_COMPOSITING,
];
