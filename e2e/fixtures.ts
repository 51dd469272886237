// The specs' `test`, with one option, `warmUp` (default true). A spec or describe block whose
// tests never train for real sets `test.use({ warmUp: false })`: its browser context then sets
// the test-only switch localStorage['ppo-test-no-warm-up'] = '1' (src/store/testSwitches.ts), and
// its pages skip the trainer warm-up that starts by itself once WebGPU is ready, about half of a
// page load's CPU on SwiftShader (docs/testing.md). The worker still starts on the first command
// that needs one. Tests that train, resume, check the warm-up, the ETA or a first real point, or
// screenshot the status row (it names the adapter the warmed-up worker reports) keep it. A
// context a test opens itself (browser.newContext) gets the switch from skipWarmUp.
import { type BrowserContext, test as base } from '@playwright/test';

export { expect } from '@playwright/test';

/** Every page of `context` skips the background warm-up. */
export async function skipWarmUp(context: BrowserContext): Promise<void> {
  await context.addInitScript(() => localStorage.setItem('ppo-test-no-warm-up', '1'));
}

export const test = base.extend<{ warmUp: boolean }>({
  warmUp: [true, { option: true }],
  context: async ({ context, warmUp }, use) => {
    if (!warmUp) await skipWarmUp(context);
    await use(context);
  },
});
