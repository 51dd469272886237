// The link parameters that choose what the page shows (src/store/viewLink.ts, parsed in
// urlConfig.ts): `?run=` takes only a relative path of a .json file on the page's own site, and
// `?embed=` a teaching view or a metric's chart; anything else is named as a link problem, in
// English and Chinese, and the rest of the link still applies.
import { afterAll, describe, expect, it } from 'vitest';
import { i18n } from '../../src/i18n/index.ts';
import { embedParam, embedViewOf, RUN_PATH_MAX, runPathOf } from '../../src/store/viewLink.ts';
import { parseQuery } from '../../src/store/urlConfig.ts';
import { problemText } from '../../src/ui/settingsText.ts';

describe('?run=', () => {
  it('takes a relative path of a .json file', () => {
    for (const ok of ['tight.json', 'runs/tight-vs-loose.json', 'runs/2026/a_b.c.json', ' runs/x.json ']) expect(runPathOf(ok)).toBe(ok.trim());
    expect(runPathOf(`${'a'.repeat(RUN_PATH_MAX - 5)}.json`)).not.toBeNull();
    expect(runPathOf(`${'a'.repeat(RUN_PATH_MAX - 4)}.json`)).toBeNull();
  });

  it('refuses another site, a way out of the page’s folder, a query, or another kind of file', () => {
    for (const bad of [
      '',
      '.json',
      'http://evil.example/run.json',
      '//evil.example/run.json',
      'https:run.json',
      '/runs/a.json',
      '../secret.json',
      'runs/../../a.json',
      'runs/.hidden.json',
      'runs//a.json',
      'runs\\a.json',
      '%2e%2e/a.json',
      'a.json?x=1',
      'a.json#frag',
      'a.JSON.txt',
      'run.js',
      'javascript:alert(1)//.json',
      'data:application/json,{}.json',
      'runs/ a.json',
    ])
      expect(runPathOf(bad), bad).toBeNull();
  });
});

describe('?embed=', () => {
  it('names a teaching view or a metric’s chart, and writes back as it was read', () => {
    for (const v of ['clipping', 'kl', 'samples', 'policies', 'inspect']) expect(embedViewOf(v)).toEqual({ kind: 'view', view: v });
    expect(embedViewOf('chart:reward_mean')).toEqual({ kind: 'chart', metric: 'reward_mean' });
    expect(embedViewOf('chart:clipfrac')).toEqual({ kind: 'chart', metric: 'clipfrac' });
    for (const v of ['kl', 'chart:kl_token_mean']) expect(embedParam(embedViewOf(v)!)).toBe(v);
  });

  it('refuses what names no view', () => {
    for (const bad of ['', 'feedback', 'Clipping', 'chart:', 'chart:iter', 'chart:not_a_metric', 'chart', 'charts:reward_mean', '<img src=x>'])
      expect(embedViewOf(bad), bad).toBeNull();
  });
});

describe('the link', () => {
  afterAll(() => i18n.changeLanguage('en'));

  it('carries both beside the settings, with no problem', () => {
    const p = parseQuery('?run=runs/tight.json&embed=chart:kl&clipLow=0.1');
    expect(p.run).toBe('runs/tight.json');
    expect(p.embed).toEqual({ kind: 'chart', metric: 'kl' });
    expect(p.config.clipLow).toBe(0.1);
    expect(p.problems).toEqual([]);
  });

  it('names a bad value by its parameter and what is allowed, and applies the rest', async () => {
    const p = parseQuery('?run=https://evil.example/x.json&embed=chart:nope&clipLow=0.1');
    expect(p.run).toBeNull();
    expect(p.embed).toBeNull();
    expect(p.config.clipLow).toBe(0.1);
    expect(p.linkProblems.map((x) => x.field)).toEqual(['run', 'embed']);
    const [run, embed] = p.linkProblems.map((x) => problemText(x));
    expect(run).toBe(p.problems[0]);
    expect(embed).toBe(p.problems[1]);
    expect(run).toContain('run = "https://evil.example/x.json"');
    expect(run).toContain('ending in .json');
    expect(embed).toContain('clipping, kl, samples, policies, inspect, chart:<metric>');
    await i18n.changeLanguage('zh-CN');
    const zh = p.linkProblems.map((x) => problemText(x));
    expect(zh[0]).toContain('允许的值');
    expect(zh[1]).toContain('例如 chart:reward_mean');
  });
});
