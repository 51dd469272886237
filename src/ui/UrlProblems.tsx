// The link's settings and the address bar kept in step (useUrlSync), and the link's problems shown
// above the playground. A leaf of its own: the mirror follows every settings change, and only this
// re-renders for it, not the playground with its charts and teaching views.
import { useTranslation } from 'react-i18next';
import { useUrlSync } from './useUrlSync.ts';

export function UrlProblems() {
  const { t } = useTranslation('common');
  const problems = useUrlSync();
  if (problems.length === 0) return null;
  return (
    <div className="notice warn url-problems" role="alert" data-testid="url-problems">
      <strong>{t('playground.urlProblems')}</strong>
      <ul>
        {problems.map((p) => (
          <li key={p}>{p}</li>
        ))}
      </ul>
    </div>
  );
}
