// Which browser the student has, from navigator.userAgentData (Chromium) or the user-agent
// string, so the no-WebGPU page shows that browser's steps first. A guess for ordering advice
// only: nothing depends on it being right, and every browser's steps stay one click away.

/** The engine families whose WebGPU switches differ. On iOS and iPadOS every browser is WebKit. */
export type BrowserFamily = 'chromium' | 'firefox' | 'safari' | 'other';
export type Platform = 'windows' | 'mac' | 'linux' | 'chromeos' | 'android' | 'ios' | 'other';

export interface BrowserGuess {
  family: BrowserFamily;
  /** The product, as a student would name it: "Chrome", "Edge", "Firefox", "Safari", … */
  name: string;
  /** Major version when the string says it; null otherwise. */
  version: number | null;
  platform: Platform;
}

/** The parts of NavigatorUAData this reads (Chromium only; absent elsewhere). */
export interface UaDataLike {
  brands?: readonly { brand: string; version: string }[];
  platform?: string;
  mobile?: boolean;
}

function platformOf(ua: string, hint?: string): Platform {
  const h = (hint ?? '').toLowerCase();
  if (h === 'windows') return 'windows';
  if (h === 'macos') return 'mac';
  if (h === 'chrome os' || h === 'chromeos') return 'chromeos';
  if (h === 'android') return 'android';
  if (h === 'linux') return 'linux';
  if (/iPhone|iPad|iPod/.test(ua)) return 'ios';
  if (/Android/.test(ua)) return 'android';
  if (/CrOS/.test(ua)) return 'chromeos';
  if (/Windows/.test(ua)) return 'windows';
  if (/Macintosh|Mac OS X/.test(ua)) return 'mac';
  if (/Linux|X11/.test(ua)) return 'linux';
  return 'other';
}

function major(ua: string, re: RegExp): number | null {
  const m = re.exec(ua);
  return m ? Number.parseInt(m[1], 10) : null;
}

/** Guess the browser from `navigator.userAgent` and, where present, `navigator.userAgentData`. */
export function guessBrowser(ua: string, uaData?: UaDataLike | null): BrowserGuess {
  const platform = platformOf(ua, uaData?.platform);
  // iOS and iPadOS: Chrome (CriOS), Firefox (FxiOS) and Edge (EdgiOS) all run on WebKit, so Safari's
  // switch is the one that matters.
  if (platform === 'ios') {
    const name = /CriOS/.test(ua) ? 'Chrome' : /FxiOS/.test(ua) ? 'Firefox' : /EdgiOS/.test(ua) ? 'Edge' : 'Safari';
    return { family: 'safari', name, version: major(ua, /Version\/(\d+)/), platform };
  }
  // An iPad asking for desktop sites says "Macintosh"; a touch screen gives it away only at run
  // time, so such an iPad is treated as a Mac (same Safari, same switch).
  const brands = uaData?.brands ?? [];
  const brand = (re: RegExp) => brands.find((b) => re.test(b.brand));
  const edge = brand(/Microsoft Edge/);
  if (edge) return { family: 'chromium', name: 'Edge', version: Number.parseInt(edge.version, 10), platform };
  const chrome = brand(/Google Chrome/);
  if (chrome) return { family: 'chromium', name: 'Chrome', version: Number.parseInt(chrome.version, 10), platform };
  if (/Firefox\//.test(ua)) return { family: 'firefox', name: 'Firefox', version: major(ua, /Firefox\/(\d+)/), platform };
  if (/Edg\//.test(ua)) return { family: 'chromium', name: 'Edge', version: major(ua, /Edg\/(\d+)/), platform };
  if (/OPR\//.test(ua)) return { family: 'chromium', name: 'Opera', version: major(ua, /Chrome\/(\d+)/), platform };
  if (/Chrome\/|Chromium\//.test(ua)) return { family: 'chromium', name: /Chromium\//.test(ua) ? 'Chromium' : 'Chrome', version: major(ua, /Chrom(?:e|ium)\/(\d+)/), platform };
  const chromium = brand(/Chromium/);
  if (chromium) return { family: 'chromium', name: 'Chromium', version: Number.parseInt(chromium.version, 10), platform };
  if (/Safari\//.test(ua) && /Version\//.test(ua)) return { family: 'safari', name: 'Safari', version: major(ua, /Version\/(\d+)/), platform };
  return { family: 'other', name: 'this browser', version: null, platform };
}

/** The order of the guidance sections: the student's browser first, then the others. */
export function guidanceOrder(family: BrowserFamily): ('chromium' | 'firefox' | 'safari')[] {
  const all = ['chromium', 'firefox', 'safari'] as const;
  if (family === 'other') return [...all];
  return [family, ...all.filter((f) => f !== family)];
}

/** The guess for this page's browser; 'other' outside a browser. */
export function currentBrowser(): BrowserGuess {
  if (typeof navigator === 'undefined') return { family: 'other', name: 'this browser', version: null, platform: 'other' };
  const nav = navigator as Navigator & { userAgentData?: UaDataLike };
  return guessBrowser(nav.userAgent, nav.userAgentData);
}
