// The header's language switch: English or 简体中文, remembered in this browser and kept in the
// page's address (so in shared links).
import { useTranslation } from 'react-i18next';
import { chooseLocaleNow } from '../i18n/choice.ts';
import { LOCALE_NAMES, LOCALES, type Locale } from '../i18n/locales.ts';

export function LanguageSwitch() {
  const { t, i18n } = useTranslation();
  return (
    <label className="language-switch">
      <span className="visually-hidden">{t('language.label')}</span>
      <select data-testid="language-switch" value={i18n.language} onChange={(e) => void chooseLocaleNow(e.target.value as Locale)}>
        {LOCALES.map((l) => (
          <option key={l} value={l} lang={l}>
            {LOCALE_NAMES[l]}
          </option>
        ))}
      </select>
    </label>
  );
}
