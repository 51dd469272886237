// How big the charts draw: the page's compact default, and presenter mode's larger ticks and
// thicker, darker lines that stay readable on a projector from the back of a room.

export interface ChartStyle {
  height: number;
  tick: { fontSize: number; fill: string };
  yWidth: number;
  line: number;
  dot: number;
  grid: string;
  /** Room right of the plot, so the last x label (centred on the last point) is not cut. */
  right: number;
}

const NORMAL: ChartStyle = { height: 160, tick: { fontSize: 11, fill: '#5b6478' }, yWidth: 56, line: 1.8, dot: 3, grid: '#eef0f5', right: 8 };
const PRESENTER: ChartStyle = { height: 190, tick: { fontSize: 20, fill: '#161b2e' }, yWidth: 84, line: 3.5, dot: 5, grid: '#c9cfdc', right: 24 };

export function chartStyle(present: boolean): ChartStyle {
  return present ? PRESENTER : NORMAL;
}
