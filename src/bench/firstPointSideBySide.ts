// Page open → first chart point of this build beside another build (`npm run bench -- --only page
// --against <dist>`), measured in turns on the same machine: the other work sharing the machine
// weighs on both alike. Each load is a fresh browser (a first visit: no pipeline cache), with
// Start clicked as soon as the GPU is ready, as in the page bench.
import { measureFrames, quantile, SMALL_CONFIG_QUERY } from './pageFrames.ts';
import { type Preview, servePreview } from './preview.ts';
import { fmt, table } from './timing.ts';

export interface SideBySide {
  /** First points in ms after navigation start, in the order measured. */
  current: number[];
  against: number[];
  /** Median of the current build over the median of the other. */
  ratio: number;
}

const describe = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return `${fmt(quantile(s, 0.5))} ms (${fmt(s[0])}–${fmt(s[s.length - 1])}, ${s.length})`;
};

export async function printFirstPointSideBySide(againstDir: string, repeats: number): Promise<SideBySide> {
  const servers: Preview[] = [];
  try {
    servers.push(await servePreview('dist'), await servePreview(againstDir));
    const [current, against] = servers;
    const times = { current: [] as number[], against: [] as number[] };
    const once = async (which: 'current' | 'against', url: string) => {
      const r = await measureFrames({ url, durationMs: 500, trainerWaitS: 120 });
      if (r.firstPointMs === undefined) throw new Error(`${which} build: no first point (${r.why})`);
      times[which].push(r.firstPointMs);
      console.log(`  ${which === 'current' ? 'this build' : againstDir}: ${fmt(r.firstPointMs)} ms`);
    };
    // In turns, the order flipped every round (ABBA…), so neither build always goes first.
    for (let i = 0; i < repeats; i++) {
      if (i % 2 === 0) {
        await once('current', current.url);
        await once('against', against.url);
      } else {
        await once('against', against.url);
        await once('current', current.url);
      }
    }
    const med = (xs: number[]) =>
      quantile(
        [...xs].sort((a, b) => a - b),
        0.5,
      );
    const ratio = med(times.current) / med(times.against);
    console.log(`\n## Page open → first metrics point, this build beside ${againstDir} (${SMALL_CONFIG_QUERY}; in turns, fresh browser each)\n`);
    console.log(
      table(
        ['build', 'median (range, loads)'],
        [
          ['this build (dist/)', describe(times.current)],
          [againstDir, describe(times.against)],
        ],
      ),
    );
    console.log(`\nthis build / other: ${ratio.toFixed(2)} of its time\n`);
    return { ...times, ratio };
  } finally {
    for (const s of servers) s.stop();
  }
}
