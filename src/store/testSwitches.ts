// Test-only switches of the page, read from localStorage so that a shared link cannot set them
// (end-to-end specs set them with `page.addInitScript` before the page's own scripts run):
// - 'ppo-test-hooks' = '1': the debug* worker messages (device loss, a NaN-making learning rate)
//   and `window.ppoPlayground.pushTrace` (ui/inspect/testHook.ts);
// - 'ppo-test-no-warm-up' = '1': no background warm-up once WebGPU is ready (runCommands.ts
//   `warmUp`). The worker then starts on the first command that needs it, as it does for a user
//   who presses Start before the warm-up began. For specs that never train: the warm-up costs
//   about 12 s of CPU per page load on SwiftShader (docs/testing.md).

function switchOn(key: string): boolean {
  try {
    return typeof localStorage !== 'undefined' && localStorage.getItem(key) === '1';
  } catch {
    return false; // storage refused (a sandboxed frame, some private modes)
  }
}

/** The debug* messages and inspector hooks. */
export function testHooksOn(): boolean {
  return switchOn('ppo-test-hooks');
}

/** No background warm-up: the trainer worker waits for the first command. */
export function warmUpSuppressed(): boolean {
  return switchOn('ppo-test-no-warm-up');
}
