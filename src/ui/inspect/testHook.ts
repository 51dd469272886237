// Test-only hook: `window.ppoPlayground.pushTrace(json)` puts a captured trace into the inspector's
// store, for e2e specs before (or without) a real training step; `runIds()` lists the runs' ids, so a
// spec can give a trace to a run. Installed only when the page's test hooks are on
// (store/testSwitches.ts), so a link cannot.
import { useApp } from '../../store/appStore.ts';
import { useInspection } from '../../store/inspection.ts';
import { testHooksOn } from '../../store/testSwitches.ts';
import '../../store/trainerClient.ts';
import { type CapturedTraceJson, traceFromJson } from '../../store/traceJson.ts';

export function installInspectTestHook(): void {
  if (typeof window === 'undefined' || !window.ppoPlayground || !testHooksOn()) return;
  Object.assign(window.ppoPlayground, {
    pushTrace: (j: CapturedTraceJson) => useInspection.getState().pushTrace(traceFromJson(j)),
    runIds: () => useApp.getState().runs.map((r) => r.id),
  });
}
