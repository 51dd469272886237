// "Skip to charts and views": the page's first focusable element, shown only while focused. It
// moves focus itself (not by the URL's hash, which the settings sync keeps in the address bar).
import type { ReactNode } from 'react';

export function SkipLink({ target, children }: { target: string; children: ReactNode }) {
  return (
    <a
      className="skip-link"
      href={`#${target}`}
      data-testid="skip-link"
      onClick={(e) => {
        const el = document.getElementById(target);
        if (!el) return;
        e.preventDefault();
        el.focus({ preventScroll: true });
        el.scrollIntoView({ block: 'start' });
      }}
    >
      {children}
    </a>
  );
}
