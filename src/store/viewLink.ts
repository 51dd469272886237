// Two link parameters that choose what the page shows rather than how it trains:
//   ?run=runs/tight-clip.json   opens a run file served with the page (same origin, a relative
//                               path) as a recorded run (runFile.ts);
//   ?embed=clipping|kl|samples|policies|inspect|chart:<metric>
//                               shows that one view alone, sized to its frame, for an iframe in
//                               slides (ui/embed/EmbedPage.tsx).
// A value the page cannot use is named like any other link problem and left out.
import { isMetricName, type MetricName } from '../rl/metricNames.ts';

export const RUN_PARAM = 'run';
export const EMBED_PARAM = 'embed';

/** The teaching views a frame can show alone, by their tab ids (ui/teach/TeachingViews.tsx). */
export const EMBED_VIEWS = ['clipping', 'kl', 'samples', 'policies', 'inspect'] as const;
export type EmbedViewId = (typeof EMBED_VIEWS)[number];

/** What `?embed=` asks for: a teaching view, or one metric's chart. */
export type EmbedView = { kind: 'view'; view: EmbedViewId } | { kind: 'chart'; metric: MetricName };

/** The longest `?run=` path taken (a shipped file's name is far shorter). */
export const RUN_PATH_MAX = 200;

// Path segments of letters, digits, dot, dash and underscore, not starting with a dot, ending in
// .json: no scheme, no host, no `..`, no query; the file can only be one the page's origin serves.
const RUN_PATH = /^(?:[A-Za-z0-9_-][A-Za-z0-9._-]*\/)*[A-Za-z0-9_-][A-Za-z0-9._-]*\.json$/;

/** `raw` as a run file's path relative to the page, or null when it is not one. */
export function runPathOf(raw: string): string | null {
  const path = raw.trim();
  return path.length <= RUN_PATH_MAX && RUN_PATH.test(path) ? path : null;
}

/** `raw` as an embedded view, or null when it names none. */
export function embedViewOf(raw: string): EmbedView | null {
  const v = raw.trim();
  if ((EMBED_VIEWS as readonly string[]).includes(v)) return { kind: 'view', view: v as EmbedViewId };
  if (v.startsWith('chart:')) {
    const metric = v.slice('chart:'.length);
    // `iter` is the x axis, not a curve.
    if (isMetricName(metric) && metric !== 'iter') return { kind: 'chart', metric };
  }
  return null;
}

/** Whether the page's query (`location.search`) embeds one view of a run file it opens: nothing trains behind it unless asked. */
export function embedsRecordedRun(search: string): boolean {
  const q = new URLSearchParams(search);
  return embedViewOf(q.get(EMBED_PARAM) ?? '') !== null && runPathOf(q.get(RUN_PARAM) ?? '') !== null;
}

/** The `?embed=` value that names `view` (embedViewOf's inverse). */
export function embedParam(view: EmbedView): string {
  return view.kind === 'view' ? view.view : `chart:${view.metric}`;
}

/** What a link's `?embed=` may say, for its problem message. */
export const EMBED_CHOICES = `${EMBED_VIEWS.join(', ')}, chart:<metric>`;
