// Every knob's help line as the settings panel renders it: in English exactly the config table's
// help, in Chinese the translation with its identifiers in <code> and nothing escaped twice.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { afterAll, describe, expect, it } from 'vitest';
import { switchLocale } from '../../src/i18n/index.ts';
import zh from '../../src/i18n/locales/zh-CN/settings.json' with { type: 'json' };
import { CONFIG_KEYS, KNOB_HELP_VALUES, KNOBS } from '../../src/rl/config.ts';
import { KnobHelp } from '../../src/ui/KnobHelp.tsx';

/** The text a reader sees in rendered markup. */
const seen = (html: string) =>
  html
    .replace(/<\/?code>/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#x27;/g, "'")
    .replace(/&amp;/g, '&');
const help = (key: (typeof CONFIG_KEYS)[number]) => renderToStaticMarkup(createElement(KnobHelp, { knob: key }));

describe('knob help in the settings panel', () => {
  afterAll(() => switchLocale('en'));

  it('English: the config table’s help', () => {
    for (const k of CONFIG_KEYS) expect(seen(help(k)), k).toBe(KNOBS[k].help);
  });

  it('Chinese: the translation, identifiers as code', async () => {
    await switchLocale('zh-CN');
    for (const k of CONFIG_KEYS) {
      const want = zh.knobs[k].help.replace(/<\/?code>/g, '').replace(/\{\{(\w+)\}\}/g, (_, v: keyof typeof KNOB_HELP_VALUES) => String(KNOB_HELP_VALUES[v]));
      expect(seen(help(k)), k).toBe(want);
    }
    expect(help('lossMode')).toMatch(/^<code>vanilla<\/code> = /);
  });
});
