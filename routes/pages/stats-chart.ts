import type { TFunction } from 'i18next';
import type { StatsPage } from '../../services/stats';

const WIDTH = 560;
const HEIGHT = 230;
const LEFT = 44;
const RIGHT = 8;
const TOP = 12;
const BOTTOM = 28;

function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** 2026-11-22 → 22/11, as dates are written in Morocco. */
function shortDate(date: string): string {
  return `${date.slice(8, 10)}/${date.slice(5, 7)}`;
}

/** A round top for the axis: 1, 2 or 5 times a power of ten, at least the largest value. */
function niceMax(value: number): number {
  if (value <= 4) return 4;
  const power = 10 ** Math.floor(Math.log10(value));
  return [1, 2, 5, 10].map((m) => m * power).find((m) => m >= value)!;
}

/** One day of a bar chart: the whole (light bar) and the part of it (dark bar in front), and the day in words. */
interface ChartDay {
  date: string;
  whole: number;
  part: number;
  label: string;
}

/**
 * A bar chart per day drawn on the server (no JavaScript): each day's whole as a light bar with its
 * part in front in dark green. Its title and description say in words what it shows; the page also
 * gives every number in a table. Right to left (`rtl`), the chart is mirrored as the page is: the
 * first day on the right, the value axis on the right. It is drawn in left-to-right coordinates
 * (`direction="ltr"`), so that its text anchors mean the same sides whatever the page's direction.
 * `id` names its title and description (two charts on one page).
 */
function barChart(days: ChartDay[], text: { id: string; title: string; description: string }, rtl: boolean): string {
  const top = niceMax(Math.max(0, ...days.map((d) => d.whole)));
  const plotWidth = WIDTH - LEFT - RIGHT;
  const plotHeight = HEIGHT - TOP - BOTTOM;
  const slot = plotWidth / Math.max(1, days.length);
  const barWidth = Math.max(1, slot * 0.7);
  const y = (value: number) => TOP + plotHeight - (value / top) * plotHeight;
  /** A left-to-right x (of a width) as drawn: mirrored right to left. */
  const x = (ltrX: number, width = 0) => (rtl ? WIDTH - ltrX - width : ltrX);
  const anchor = (side: 'start' | 'end' | 'middle') => (side === 'middle' || !rtl ? side : side === 'start' ? 'end' : 'start');
  const parts: string[] = [
    `<svg class="chart" viewBox="0 0 ${WIDTH} ${HEIGHT}" direction="ltr" role="img" aria-labelledby="${text.id}-title ${text.id}-desc" xmlns="http://www.w3.org/2000/svg">`,
    `<title id="${text.id}-title">${escapeXml(text.title)}</title>`,
    `<desc id="${text.id}-desc">${escapeXml(text.description)}</desc>`,
  ];
  for (const value of [0, top / 2, top]) {
    parts.push(
      `<line class="axis" x1="${x(LEFT)}" x2="${x(WIDTH - RIGHT)}" y1="${y(value)}" y2="${y(value)}" stroke-dasharray="${value === 0 ? '' : '3 3'}"/>`,
    );
    parts.push(`<text x="${x(LEFT - 6)}" y="${y(value) + 4}" text-anchor="${anchor('end')}">${value}</text>`);
  }
  days.forEach((day, i) => {
    const barX = x(LEFT + i * slot + (slot - barWidth) / 2, barWidth).toFixed(1);
    parts.push(`<g><title>${escapeXml(day.label)}</title>`);
    if (day.whole > 0)
      parts.push(
        `<rect class="bar-orders" x="${barX}" y="${y(day.whole).toFixed(1)}" width="${barWidth.toFixed(1)}" height="${(TOP + plotHeight - y(day.whole)).toFixed(1)}"/>`,
      );
    if (day.part > 0)
      parts.push(
        `<rect class="bar-confirmed" x="${barX}" y="${y(day.part).toFixed(1)}" width="${barWidth.toFixed(1)}" height="${(TOP + plotHeight - y(day.part)).toFixed(1)}"/>`,
      );
    parts.push('</g>');
  });
  const labelled = days.length <= 1 ? [0] : [0, Math.floor((days.length - 1) / 2), days.length - 1];
  for (const i of new Set(labelled)) {
    if (!days[i]) continue;
    const side = i === 0 ? 'start' : i === days.length - 1 ? 'end' : 'middle';
    parts.push(`<text x="${x(LEFT + i * slot + slot / 2).toFixed(1)}" y="${HEIGHT - 8}" text-anchor="${anchor(side)}">${shortDate(days[i].date)}</text>`);
  }
  parts.push('</svg>');
  return parts.join('');
}

/** Orders and confirmations per day (see barChart). */
export function dailyChart(stats: StatsPage, t: TFunction, rtl = false, dayText: (date: string) => string = (date) => date): string {
  const days = stats.by_day;
  const busiest = days.reduce((best, d) => (d.orders > best.orders ? d : best), days[0] ?? { date: stats.to, orders: 0, confirmed: 0 });
  const description =
    t('stats.chart.summary', { from: dayText(stats.from), to: dayText(stats.to), count: stats.orders, confirmed: stats.by_status.confirmed }) +
    (busiest.orders > 0 ? ` ${t('stats.chart.busiest', { date: dayText(busiest.date), count: busiest.orders, confirmed: busiest.confirmed })}` : '');
  return barChart(
    days.map((d) => ({
      date: d.date,
      whole: d.orders,
      part: d.confirmed,
      label: t('stats.chart.day', { date: dayText(d.date), count: d.orders, confirmed: d.confirmed }),
    })),
    { id: 'chart', title: t('stats.chart.title'), description },
    rtl,
  );
}

/** Deliveries that ended per day, the delivered ones in front (see barChart). */
export function deliveryChart(stats: StatsPage, t: TFunction, rtl = false, dayText: (date: string) => string = (date) => date): string {
  const description = t('deliveryStats.chart.summary', {
    from: dayText(stats.from),
    to: dayText(stats.to),
    count: stats.delivery.ended,
    delivered: stats.delivery.delivered,
  });
  return barChart(
    stats.delivery.by_day.map((d) => ({
      date: d.date,
      whole: d.ended,
      part: d.delivered,
      label: t('deliveryStats.chart.day', { date: dayText(d.date), count: d.ended, delivered: d.delivered }),
    })),
    { id: 'delivery-chart', title: t('deliveryStats.chart.title'), description },
    rtl,
  );
}
