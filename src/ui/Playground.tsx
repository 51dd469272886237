// The playground layout: controls on the left, live charts and teaching views on the right.
export function Playground() {
  return <section className="playground" data-testid="playground"><p>Playground</p></section>;
}
