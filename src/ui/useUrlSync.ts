// Reads the config, `?hide=` and `?present=` from the URL once, then mirrors every config change
// (and the presenter switch) back into the address bar (replaceState: settings changes should not
// flood the back button); `?run=` and `?embed=` stay as the link had them. A reward function from the link waiting for the visitor's answer stays
// in the address bar until then, so a reload asks again. The link's problems come back worded in
// the visitor's language, and reworded when it changes.
import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { linkLocale } from '../i18n/choice.ts';
import { useApp } from '../store/appStore.ts';
import { configToQuery, type LinkProblem, parseQuery } from '../store/urlConfig.ts';
import { EMBED_PARAM, type EmbedView, embedParam, RUN_PARAM } from '../store/viewLink.ts';
import { setPresenter, usePresenter } from './presenter.ts';
import { problemText } from './settingsText.ts';

export function useUrlSync(): string[] {
  const [problems, setProblems] = useState<LinkProblem[]>([]);
  const config = useApp((s) => s.config);
  const hidden = useApp((s) => s.hidden);
  const budget = useApp((s) => s.budgetOverride);
  const pending = useApp((s) => s.pendingRewardFunction);
  const present = usePresenter();
  const [loaded, setLoaded] = useState(false);
  // What the link shows (?run=, ?embed=) stays in it: a reload shows the same.
  const [view, setView] = useState<{ run: string | null; embed: EmbedView | null }>({ run: null, embed: null });
  // The switch changes the link's ?lang= too.
  const lang = useTranslation('settings').i18n.language;

  useEffect(() => {
    const parsed = parseQuery(window.location.search, useApp.getState().config);
    useApp.getState().applyLink({ config: parsed.config, hidden: parsed.hidden, budgetOverride: parsed.budget, pendingRewardFunction: parsed.pendingRewardFunction });
    if (parsed.present !== null) setPresenter(parsed.present);
    if (parsed.linkProblems.length > 0) setProblems(parsed.linkProblems);
    if (parsed.run !== null || parsed.embed !== null) setView({ run: parsed.run, embed: parsed.embed });
    setLoaded(true);
  }, []);

  useEffect(() => {
    if (!loaded) return;
    const shown = pending === null ? config : { ...config, rewardFunction: pending };
    const q = new URLSearchParams(configToQuery(shown, hidden, budget, present, linkLocale(lang)));
    if (view.run !== null) q.set(RUN_PARAM, view.run);
    if (view.embed !== null) q.set(EMBED_PARAM, embedParam(view.embed));
    window.history.replaceState(null, '', `${window.location.pathname}?${q.toString()}${window.location.hash}`);
  }, [config, hidden, budget, present, loaded, pending, lang, view]);

  return problems.map((p) => problemText(p));
}
