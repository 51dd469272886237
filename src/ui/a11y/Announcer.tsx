// The page's one polite live region: says when training starts, pauses, resumes or stops, and the
// message that came with it (NaN found, device lost, budget reached), as announce.ts words it.
import { useEffect, useState } from 'react';
import { useApp } from '../../store/appStore.ts';
import { announcement } from './announce.ts';

export function Announcer() {
  const [said, setSaid] = useState({ text: '', n: 0 });
  useEffect(
    () =>
      useApp.subscribe((next, prev) => {
        const text = announcement(prev, next);
        // The same sentence twice in a row (paused, resumed, paused) must change the region to be read again.
        if (text) setSaid((s) => ({ text, n: s.n + 1 }));
      }),
    [],
  );
  return (
    <div className="visually-hidden" aria-live="polite" aria-atomic="true" data-testid="announcer">
      {said.text}
      {said.n % 2 ? '\u00a0' : ''}
    </div>
  );
}
