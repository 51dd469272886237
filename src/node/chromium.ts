// The installed Chromium the e2e tests and the page bench drive, and its flags. Browsers are never
// downloaded: PPO_CHROMIUM points at an installed Chromium (default: the Debian package).

export const CHROMIUM_PATH = process.env.PPO_CHROMIUM ?? '/usr/bin/chromium';

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
];
