// `?present=1` opens presenter mode, survives a shared link, and a bad value is reported, not applied.
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../src/rl/config.ts';
import { configToQuery, parseQuery } from '../../src/store/urlConfig.ts';

describe('?present=', () => {
  it('reads on, off and absent', () => {
    expect(parseQuery('?present=1').present).toBe(true);
    expect(parseQuery('?present').present).toBe(true);
    expect(parseQuery('?present=0').present).toBe(false);
    expect(parseQuery('?clipLow=0.1').present).toBeNull();
    expect(parseQuery('?present=1').problems).toEqual([]);
  });

  it('reports a bad value and applies the rest of the link', () => {
    const p = parseQuery('?present=yes&clipLow=0.1');
    expect(p.present).toBeNull();
    expect(p.problems).toEqual([expect.stringMatching(/^present = .*allowed: 1/)]);
    expect(p.config.clipLow).toBe(0.1);
  });

  it('is kept in a shared link only when on', () => {
    expect(parseQuery(`?${configToQuery(DEFAULT_CONFIG, [], null, true)}`).present).toBe(true);
    expect(configToQuery(DEFAULT_CONFIG)).not.toContain('present');
  });
});
