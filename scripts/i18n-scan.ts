import { readFileSync } from 'node:fs';
import { scanSource } from '../tests/helpers/i18nScan.ts';
const files = process.argv.slice(2);
for (const f of files) for (const h of scanSource(f, readFileSync(f, 'utf8'), { prose: true })) console.log(`${h.file}:${h.line} ${h.kind} ${JSON.stringify(h.text)}`);
