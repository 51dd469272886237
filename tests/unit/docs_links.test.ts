// Every relative link in the READMEs and docs/ leads somewhere: the file exists, and a `#fragment`
// into a Markdown file names one of its headings (GitHub's anchor for it).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../..');
const pages = [
  'README.md',
  'README.zh-CN.md',
  ...readdirSync(resolve(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** The text outside fenced code blocks and inline code, where links are links. */
function prose(text: string): string {
  return text.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
function anchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors a Markdown file's headings get, with GitHub's -1, -2 … for repeats. */
function anchors(file: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of readFileSync(file, 'utf8')
    .replace(/```[\s\S]*?```/g, '')
    .matchAll(/^#{1,6} (.+)$/gm)) {
    const base = anchor(m[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** Relative link targets in `page` (images too), without web addresses and in-page anchors. */
function relativeLinks(page: string): string[] {
  const text = prose(readFileSync(resolve(root, page), 'utf8'));
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]).filter((t) => !/^[a-z]+:/i.test(t));
}

describe('relative links in the READMEs and docs/ resolve', () => {
  it('finds the pages and their links', () => {
    expect(pages.length).toBeGreaterThan(2);
    expect(relativeLinks('README.md').length).toBeGreaterThan(5);
  });

  it('turns headings into GitHub anchors', () => {
    expect(anchor('Model size: SFT and PPO time at S, M and L')).toBe('model-size-sft-and-ppo-time-at-s-m-and-l');
    expect(anchor('`npm run learning`')).toBe('npm-run-learning');
    expect(anchor('A reward you write runs in QuickJS, in the trainer worker')).toBe('a-reward-you-write-runs-in-quickjs-in-the-trainer-worker');
  });

  it.each(pages)('%s', (page) => {
    const broken: string[] = [];
    for (const link of relativeLinks(page)) {
      const [path, fragment] = link.split('#');
      const target = path === '' ? resolve(root, page) : resolve(root, dirname(page), decodeURI(path));
      if (!existsSync(target)) broken.push(`${link}: no file ${target.slice(root.length + 1)}`);
      else if (fragment !== undefined && target.endsWith('.md') && !anchors(target).has(fragment)) broken.push(`${link}: no heading with anchor #${fragment}`);
    }
    expect(broken).toEqual([]);
  });
});
