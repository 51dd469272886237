// Every card's recorded run, shipped with the page in public/runs/presets/ (written by
// `npm run record-runs`, src/record/): one run file per arm, so "Show the result" opens a paired
// preset's arms overlaid as one comparison, on any device, without training.
import type { HfPreset } from '../rl/hf/hfPresets.ts';
import { findPreset, presetArms, type Preset } from '../rl/presets.ts';
import { useApp } from './appStore.ts';
import { comparisonOf } from './comparisons.ts';
import * as notices from './notices.ts';
import { openServedRunFile } from './runFiles.ts';
import type { RunRecord } from './runs.ts';

/** The directory of the cards' run files, relative to the page. */
export const PRESET_RUNS_DIR = 'runs/presets';

/** The run file of arm `arm` of `preset`, relative to the page: `runs/presets/clipping-1.json`, or `…/dapo.json` without arms. */
export function presetRunPath(preset: Preset, arm: number): string {
  const n = presetArms(preset).length;
  return `${PRESET_RUNS_DIR}/${preset.id}${n > 1 ? `-${arm + 1}` : ''}.json`;
}

/** The run file of a "Your own model" preset (rl/hf/hfPresets.ts), trained on the shipped chat model. */
export function hfPresetRunPath(preset: Pick<HfPreset, 'id'>): string {
  return `${PRESET_RUNS_DIR}/own-model-${preset.id}.json`;
}

/** Every arm's run file of `preset`, in the arms' order. */
export function presetRunPaths(preset: Preset): string[] {
  return presetArms(preset).map((_, i) => presetRunPath(preset, i));
}

/**
 * "Show the result": the preset's recorded runs, one per arm, on the charts as a new comparison
 * (the runs already there stay in the list), or as the comparison they were shown in before. A
 * file the page cannot read is named in the notice bar, as any run file is (runFiles.ts), and the
 * arms before it stay open.
 */
export async function showPresetResult(name: string): Promise<{ runs: RunRecord[]; message: string }> {
  const preset = findPreset(name);
  if (!preset) return { runs: [], message: `no preset called ${JSON.stringify(name)}` };
  const s = useApp.getState();
  const paths = presetRunPaths(preset);
  // Shown before: that comparison again (each file finds its run: runFiles.ts adds none twice).
  const before = paths.map((p) => s.runs.find((r) => r.recorded?.file === p));
  const shownBefore = before.every((r) => r !== undefined) && new Set(before.map((r) => comparisonOf(r!))).size === 1;
  if (shownBefore) s.showComparison(comparisonOf(before[0]!));
  else if (s.runs.some((r) => r.visible)) s.newComparison();
  const runs: RunRecord[] = [];
  for (const path of paths) {
    const opened = await openServedRunFile(path);
    if (!opened.run) return { runs, message: opened.message };
    runs.push(opened.run);
  }
  const first = runs[0];
  const message = notices.presetResultOpened(
    preset.id,
    runs.map((r) => r.name),
    first.metrics.length,
    first.recorded?.savedAt ?? '',
    first.config.seed,
  );
  useApp.getState().setNotice({ tone: 'info', text: message });
  return { runs, message };
}
