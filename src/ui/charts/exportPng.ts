// Chart → PNG without WebGPU: serialise the recharts SVG, draw it on a 2D canvas, download.
// (A WebGPU canvas would crash SwiftShader's GPU process; Canvas2D is safe everywhere.)
// Its errors reach the page's notice, so they are worded in the page's language (charts:png.*).
import { t } from '../../i18n/index.ts';
import { downloadBlob } from '../../store/download.ts';

export async function svgToPngBlob(svg: SVGSVGElement, title: string, scale = 2): Promise<Blob> {
  const { width, height } = svg.getBoundingClientRect();
  const clone = svg.cloneNode(true) as SVGSVGElement;
  clone.setAttribute('xmlns', 'http://www.w3.org/2000/svg');
  clone.setAttribute('width', String(width));
  clone.setAttribute('height', String(height));
  // Text inherits the page font through CSS, which a standalone SVG image does not see.
  clone.setAttribute('font-family', getComputedStyle(svg).fontFamily || 'sans-serif');
  clone.setAttribute('font-size', '12');
  const titleHeight = 24;
  const xml = new XMLSerializer().serializeToString(clone);
  const url = URL.createObjectURL(new Blob([xml], { type: 'image/svg+xml;charset=utf-8' }));
  try {
    const img = new Image();
    await new Promise<void>((resolve, reject) => {
      img.onload = () => resolve();
      img.onerror = () => reject(new Error(t('charts:png.notRendered')));
      img.src = url;
    });
    const canvas = document.createElement('canvas');
    canvas.width = Math.ceil(width * scale);
    canvas.height = Math.ceil((height + titleHeight) * scale);
    const ctx = canvas.getContext('2d');
    if (!ctx) throw new Error(t('charts:png.noCanvas'));
    ctx.scale(scale, scale);
    ctx.fillStyle = '#ffffff';
    ctx.fillRect(0, 0, width, height + titleHeight);
    ctx.fillStyle = '#161b2e';
    ctx.font = '600 13px system-ui, sans-serif';
    ctx.fillText(title, 8, 16);
    ctx.drawImage(img, 0, titleHeight, width, height);
    return await new Promise<Blob>((resolve, reject) => canvas.toBlob((b) => (b ? resolve(b) : reject(new Error(t('charts:png.encodingFailed')))), 'image/png'));
  } finally {
    URL.revokeObjectURL(url);
  }
}

export async function downloadChartPng(container: HTMLElement, title: string): Promise<void> {
  const svg = container.querySelector('svg.recharts-surface') as SVGSVGElement | null;
  if (!svg) throw new Error(t('charts:png.noChart'));
  downloadBlob(await svgToPngBlob(svg, title), `${slug(title)}.png`);
}

/** A file name from a chart title: "Reward" → "reward"; a Chinese title keeps its characters ("奖励"). */
export function slug(s: string): string {
  return (
    s
      .toLowerCase()
      .replace(/[^a-z0-9\p{Script=Han}]+/gu, '-')
      .replace(/^-|-$/g, '') || 'chart'
  );
}
