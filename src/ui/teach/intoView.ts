// The teaching views brought into view after a view elsewhere on the page asked them for something
// (the own-model panel's "Open in Inspect"): on the next frame, once the asked-for tab is drawn.
export function teachingViewsIntoView(): void {
  requestAnimationFrame(() => document.getElementById('teach-panel')?.scrollIntoView({ block: 'start' }));
}
