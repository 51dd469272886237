// Every chart the page can show explains itself: a formula, a healthy and a sick curve, and its
// name in verl's and OpenRLHF's logs (or why an engine has none).
import katex from 'katex';
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadNamespaces } from '../../src/i18n/index.ts';
import { DEFAULT_CONFIG } from '../../src/rl/config.ts';
import { ViewHelp } from '../../src/ui/charts/ChartHelp.tsx';
import { CHART_HELP, HELD_OUT_KEY, logName, ownModelHelpNote, TEACH_VIEW_KEYS } from '../../src/ui/charts/chartHelpText.ts';
import { hfPpoConfig } from '../../src/rl/hf/hfPpoDefaults.ts';
import { CHARTS, chartsFor, PRESENTER_METRICS } from '../../src/ui/charts/chartList.ts';

// The chart texts are in the lazily loaded `charts` namespace.
beforeAll(() => loadNamespaces(['charts']));

describe('chart help', () => {
  it('has an entry for every chart the page can show, and the held-out chart', () => {
    for (const c of CHARTS) expect(Object.hasOwn(CHART_HELP, c.metric), c.metric).toBe(true);
    expect(Object.hasOwn(CHART_HELP, HELD_OUT_KEY)).toBe(true);
  });

  it('every entry has a formula that typesets, a healthy and a sick curve, and both engines’ names', () => {
    for (const [metric, h] of Object.entries(CHART_HELP)) {
      for (const text of [h.what, h.healthy, h.sick]) expect(text.length, metric).toBeGreaterThan(20);
      expect(h.healthy).not.toBe(h.sick);
      // A formula KaTeX cannot parse would show in red on the page.
      expect(() => katex.renderToString(h.formula, { throwOnError: true }), metric).not.toThrow();
      for (const e of [h.verl, h.openrlhf]) {
        // No counterpart must say why.
        if (e.name === null) expect(e.note?.length ?? 0, metric).toBeGreaterThan(10);
        else expect(e.name.length).toBeGreaterThan(1);
      }
    }
  });

  it('on your own model the KL chart names the estimator the run uses; no other chart adds a note', () => {
    const estimator = hfPpoConfig({ estimator: 'group_norm', samplesPerPrompt: 2, maxNewTokens: 4, seed: 1, klCoef: 0.05, lr: 1e-3 }).klEstimator;
    expect(ownModelHelpNote('kl')).toContain(`the estimator is always ${estimator},`);
    expect(CHART_HELP.kl.what).toContain('chosen in the settings'); // the playground's, which the note corrects there
    for (const c of CHARTS) if (c.metric !== 'kl') expect(ownModelHelpNote(c.metric), c.metric).toBeUndefined();
  });

  it('names verl’s and OpenRLHF’s standard metrics', () => {
    expect(CHART_HELP.clipfrac.verl.name).toBe('actor/pg_clipfrac');
    expect(CHART_HELP.approx_kl.verl.name).toBe('actor/ppo_kl');
    expect(CHART_HELP.value_loss.verl.name).toBe('critic/vf_loss');
    expect(CHART_HELP.policy_loss.verl.name).toBe('actor/pg_loss');
    expect(CHART_HELP.entropy.verl.name).toBe('actor/entropy');
    expect(CHART_HELP.reward_mean.verl.name).toBe('critic/score/mean');
    expect(CHART_HELP.response_length_mean.verl.name).toBe('response_length/mean');
    expect(CHART_HELP.clipfrac.openrlhf.name).toBe('ppo_clip_ratio');
    expect(CHART_HELP.value_loss.openrlhf.name).toBe('critic_loss');
  });

  it('the teaching views (clipping, KL shaping) have entries naming the engines’ clip and KL-penalty numbers', () => {
    for (const key of TEACH_VIEW_KEYS) expect(Object.hasOwn(CHART_HELP, key), key).toBe(true);
    expect(CHART_HELP.clipping.verl.name).toBe('actor/pg_clipfrac');
    expect(CHART_HELP.clipping.openrlhf.name).toBe('ppo_clip_ratio');
    expect(CHART_HELP.kl_shaping.verl.name).toBe('actor/reward_kl_penalty');
    expect(CHART_HELP.kl_shaping.openrlhf.name).toBe('kl');
  });

  it('ViewHelp renders a closed "?" named after the view, for the view’s entry', () => {
    const html = renderToStaticMarkup(createElement(ViewHelp, { view: 'clipping', title: 'PPO clipping' }));
    expect(html).toContain('class="view-help"');
    expect(html).toContain('data-testid="chart-help-clipping"');
    expect(html).toContain('aria-label="What PPO clipping means"');
    expect(html).toContain('aria-expanded="false"');
  });
});

describe('which coefficient is charted', () => {
  const metrics = (cfg = DEFAULT_CONFIG) => chartsFor([], cfg).map((c) => c.metric);
  it('charts β with the KL in the reward and the KL-loss coefficient with the KL loss', () => {
    expect(metrics()).toContain('beta');
    expect(metrics()).not.toContain('kl_loss_coef');
    const lossOnly = { ...DEFAULT_CONFIG, klInReward: false, useKlLoss: true, klController: 'adaptive' as const };
    expect(metrics(lossOnly)).toEqual(expect.arrayContaining(['kl_loss_coef', 'kl_loss']));
    expect(metrics(lossOnly)).not.toContain('beta');
    // Runs shown decide, not the current settings.
    const run = { config: lossOnly, metrics: [{ iter: 0, values: { beta: 0, kl_loss_coef: 0.01 } }] };
    expect(chartsFor([run], DEFAULT_CONFIG).map((c) => c.metric)).not.toContain('beta');
    expect(chartsFor([run, { config: DEFAULT_CONFIG, metrics: [] }], DEFAULT_CONFIG).map((c) => c.metric)).toEqual(expect.arrayContaining(['beta', 'kl_loss_coef']));
  });

  it('presenter mode shows the presenter charts only', () => {
    expect(chartsFor([], DEFAULT_CONFIG, true).map((c) => c.metric)).toEqual([...PRESENTER_METRICS]);
  });
});

describe('the log name beside a chart title', () => {
  it('is verl’s name where verl logs the number, else OpenRLHF’s, never a pattern', () => {
    for (const [metric, help] of Object.entries(CHART_HELP)) {
      const shown = logName(metric);
      const verl = help.verl.name && !help.verl.name.includes('<') ? help.verl.name : null;
      const openrlhf = help.openrlhf.name && !help.openrlhf.name.includes('<') ? help.openrlhf.name : null;
      expect(shown, metric).toEqual(verl ? { engine: 'verl', name: verl } : openrlhf ? { engine: 'openrlhf', name: openrlhf } : null);
    }
    expect(logName('reward_mean')).toEqual({ engine: 'verl', name: 'critic/score/mean' });
    expect(logName(HELD_OUT_KEY)).toBeNull();
    expect(logName('no_such_metric')).toBeNull();
  });
});
