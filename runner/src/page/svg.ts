/**
 * The report page's figures as SVG, drawn here from the numbers (no chart library): each is one
 * self-contained <svg> (its fonts, colours and patterns in attributes and its own <defs>), so the
 * page's download buttons save exactly what is shown, as SVG or as PNG. Colours are the Okabe-Ito
 * palette, safe for the common colour-vision deficiencies, and no colour carries meaning alone:
 * bar series differ by pattern too, heat-map cells carry their value as text, and each latency
 * panel is named. Every text goes through `escapeHtml` (its numeric references are valid XML).
 */
import type { Interval } from "../stats.js";
import { escapeHtml } from "./html.js";

/** Okabe & Ito (2008), "Color Universal Design". */
export const OKABE_ITO = {
  orange: "#E69F00",
  sky: "#56B4E9",
  green: "#009E73",
  yellow: "#F0E442",
  blue: "#0072B2",
  vermillion: "#D55E00",
  purple: "#CC79A7",
  black: "#000000",
} as const;

/** Line colours of the configs, in order (yellow last: it is faint on white). */
export const SERIES_COLOURS = [
  OKABE_ITO.blue,
  OKABE_ITO.orange,
  OKABE_ITO.green,
  OKABE_ITO.vermillion,
  OKABE_ITO.purple,
  OKABE_ITO.sky,
  OKABE_ITO.black,
  OKABE_ITO.yellow,
];

export type Pattern = "solid" | "hatch" | "dots" | "cross";

export interface BarSeries {
  label: string;
  colour: string;
  pattern: Pattern;
  /** Rates in [0, 1]; null draws nothing (no value). */
  values: (number | null)[];
  /** 95% intervals drawn as whiskers. */
  intervals?: (Interval | null)[];
}

const FONT = `font-family="system-ui, -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif"`;
const AXIS = "#333";
const GRID = "#d9d9d9";
const f = (v: number) => String(Math.round(v * 10) / 10);

/** The text of a label, cut to `max` characters (the whole text stays in a <title>). */
function label(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

const text = (x: number, y: number, value: string, attrs = "") =>
  `<text x="${f(x)}" y="${f(y)}"${attrs ? ` ${attrs}` : ""}>${escapeHtml(value)}</text>`;

/** An <svg> element with its accessible name, a white background and a default font. */
function svg(
  id: string,
  width: number,
  height: number,
  name: string,
  body: string,
  defs = "",
  cls = "",
): string {
  return `<svg xmlns="http://www.w3.org/2000/svg" id="${escapeHtml(id)}"${cls ? ` class="${escapeHtml(cls)}"` : ""} viewBox="0 0 ${f(width)} ${f(height)}" width="${f(width)}" height="${f(height)}" style="max-width:${f(width * 1.25)}px" role="img" aria-labelledby="${escapeHtml(id)}-title" ${FONT} font-size="12" fill="${AXIS}"><title id="${escapeHtml(id)}-title">${escapeHtml(name)}</title>${defs ? `<defs>${defs}</defs>` : ""}<rect width="100%" height="100%" fill="#fff"/>${body}</svg>`;
}

/** The fill of a series: its colour, or a pattern of it over a light ground. */
function patternDef(id: string, colour: string, pattern: Pattern): string {
  const ground = `<rect width="8" height="8" fill="#fff"/><rect width="8" height="8" fill="${colour}" fill-opacity="0.25"/>`;
  switch (pattern) {
    case "solid":
      return "";
    case "hatch":
      return `<pattern id="${id}" patternUnits="userSpaceOnUse" width="8" height="8" patternTransform="rotate(45)">${ground}<rect width="3.5" height="8" fill="${colour}"/></pattern>`;
    case "cross":
      return `<pattern id="${id}" patternUnits="userSpaceOnUse" width="8" height="8" patternTransform="rotate(45)">${ground}<rect width="2.5" height="8" fill="${colour}"/><rect width="8" height="2.5" fill="${colour}"/></pattern>`;
    case "dots":
      return `<pattern id="${id}" patternUnits="userSpaceOnUse" width="6" height="6">${ground}<circle cx="3" cy="3" r="1.8" fill="${colour}"/></pattern>`;
  }
}
const fillOf = (id: string, s: { colour: string; pattern: Pattern }) =>
  s.pattern === "solid" ? s.colour : `url(#${id})`;

/** A legend on one or more rows from (left, top): a swatch and the series' name each. */
function legend(
  items: { label: string; fill: string; stroke: string }[],
  left: number,
  top: number,
  width: number,
): { svg: string; height: number } {
  let x = left;
  let y = top;
  const parts: string[] = [];
  for (const item of items) {
    const w = 22 + label(item.label, 24).length * 6.6 + 14;
    if (x + w > left + width && x > left) {
      x = left;
      y += 18;
    }
    parts.push(
      `<rect x="${f(x)}" y="${f(y)}" width="16" height="12" fill="${item.fill}" stroke="${item.stroke}"/>`,
      text(x + 22, y + 10.5, label(item.label, 24)),
    );
    x += w;
  }
  return { svg: `<g class="legend">${parts.join("")}</g>`, height: y - top + 18 };
}

const pctText = (v: number) => `${(v * 100).toFixed(1)}%`;

/**
 * Grouped bars of rates per config, on a 0–100% axis, with 95% whiskers where given. A bar of
 * 0% has a minimum height and a "0%" label, so it reads as zero and not as missing.
 */
export function barChart(spec: { id: string; name: string; labels: string[]; series: BarSeries[] }): string {
  const { id, labels, series } = spec;
  const width = 640;
  const left = 48;
  const right = 12;
  const plotWidth = width - left - right;
  const defs = series.map((s, i) => patternDef(`${id}-p${i}`, s.colour, s.pattern)).join("");
  const key = legend(
    series.map((s, i) => ({ label: s.label, fill: fillOf(`${id}-p${i}`, s), stroke: s.colour })),
    left,
    10,
    plotWidth,
  );
  const top = 10 + key.height + 14;
  const plotHeight = 240;
  const bottom = top + plotHeight;
  const height = bottom + 40;
  const y = (v: number) => bottom - v * plotHeight;
  const parts: string[] = [key.svg];
  for (const tick of [0, 0.2, 0.4, 0.6, 0.8, 1]) {
    parts.push(
      `<line x1="${left}" x2="${width - right}" y1="${f(y(tick))}" y2="${f(y(tick))}" stroke="${tick === 0 ? AXIS : GRID}"/>`,
      text(left - 6, y(tick) + 4, `${Math.round(tick * 100)}%`, 'text-anchor="end"'),
    );
  }
  const group = plotWidth / Math.max(labels.length, 1);
  const barWidth = (group * 0.78) / Math.max(series.length, 1);
  labels.forEach((name, j) => {
    const x0 = left + group * j + group * 0.11;
    series.forEach((s, i) => {
      const v = s.values[j];
      if (v === null || v === undefined) return;
      const x = x0 + barWidth * i;
      const h = Math.max(v * plotHeight, 2);
      const iv = s.intervals?.[j];
      const tip = `${name}, ${s.label}: ${pctText(v)}${iv ? ` [${pctText(iv.lo)}, ${pctText(iv.hi)}]` : ""}`;
      parts.push(
        `<rect x="${f(x + 1)}" y="${f(bottom - h)}" width="${f(barWidth - 2)}" height="${f(h)}" fill="${fillOf(`${id}-p${i}`, s)}" stroke="${s.colour}"><title>${escapeHtml(tip)}</title></rect>`,
      );
      const cx = x + barWidth / 2;
      if (iv) {
        const lo = y(iv.lo);
        const hi = y(iv.hi);
        parts.push(
          `<path d="M${f(cx)} ${f(lo)}V${f(hi)}M${f(cx - 4)} ${f(lo)}H${f(cx + 4)}M${f(cx - 4)} ${f(hi)}H${f(cx + 4)}" stroke="${AXIS}" stroke-width="1.2" fill="none"/>`,
        );
      }
      if (v === 0)
        parts.push(
          text(
            cx,
            bottom - 6,
            "0%",
            'text-anchor="middle" font-size="10" font-weight="bold" stroke="#fff" stroke-width="3" paint-order="stroke"',
          ),
        );
    });
    parts.push(
      `<g>${text(left + group * (j + 0.5), bottom + 18, label(name, 14), 'text-anchor="middle"')}<title>${escapeHtml(name)}</title></g>`,
    );
  });
  return svg(id, width, height, spec.name, parts.join(""), defs);
}

/** Ticks of a logarithmic axis from lo to hi (both > 0): decades, and 2 and 5 when few. */
export function logTicks(lo: number, hi: number): number[] {
  const from = Math.floor(Math.log10(lo));
  const to = Math.ceil(Math.log10(hi));
  const steps = to - from <= 2 ? [1, 2, 5] : [1];
  const ticks: number[] = [];
  for (let e = from; e <= to; e++)
    for (const m of steps) {
      const v = m * 10 ** e;
      if (v >= lo / 1.0001 && v <= hi * 1.0001) ticks.push(Number(v.toPrecision(3)));
    }
  return ticks;
}

const tickText = (v: number) => (v >= 1 ? String(v) : String(Number(v.toPrecision(2))));

/**
 * The latency CDF as small multiples: one panel per config on the same logarithmic axis, its
 * own curve drawn over the others' in light grey, with its median marked.
 */
export function cdfPanels(spec: {
  id: string;
  name: string;
  samples: [string, number[]][];
  /** Panels per row (default 2); the class of the <svg>, e.g. for a narrow screen's variant. */
  columns?: number;
  cls?: string;
}): string {
  const series = spec.samples.filter(([, xs]) => xs.length > 0);
  if (series.length === 0) return "";
  const all = series.flatMap(([, xs]) => xs).filter((v) => v > 0);
  const min = Math.min(...all, 1);
  const max = Math.max(...all, min * 10);
  const lo = 10 ** Math.floor(Math.log10(min));
  const hi = 10 ** Math.ceil(Math.log10(max));
  const ticks = logTicks(lo, hi);
  const columns = Math.min(series.length, spec.columns ?? 2);
  const width = columns === 1 ? 360 : 640;
  const panelWidth = (width - 16) / columns;
  const panelHeight = 190;
  const rows = Math.ceil(series.length / columns);
  const height = 10 + rows * panelHeight + 22;
  const pad = { left: 44, right: 12, top: 30, bottom: 34 };
  const plotW = panelWidth - pad.left - pad.right;
  const plotH = panelHeight - pad.top - pad.bottom;
  const xOf = (v: number) =>
    (Math.log10(Math.max(v, lo)) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo));
  const curve = (xs: number[], x0: number, y0: number) => {
    let d = `M${f(x0)} ${f(y0 + plotH)}`;
    xs.forEach((v, k) => {
      const x = x0 + xOf(v) * plotW;
      d += `H${f(x)}V${f(y0 + plotH - ((k + 1) / xs.length) * plotH)}`;
    });
    return `${d}H${f(x0 + plotW)}`;
  };
  const parts: string[] = [];
  series.forEach(([name, xs], i) => {
    const colour = SERIES_COLOURS[i % SERIES_COLOURS.length] as string;
    const ox = 8 + (i % columns) * panelWidth + pad.left;
    const oy = 10 + Math.floor(i / columns) * panelHeight + pad.top;
    const median = xs[Math.floor((xs.length - 1) / 2)] as number;
    parts.push(
      `<g>${text(ox, oy - 10, label(name, 22), 'font-weight="bold"')}<title>${escapeHtml(name)}</title></g>`,
      text(
        ox + plotW,
        oy - 10,
        `n ${xs.length} · p50 ${median.toFixed(3)} ms`,
        'text-anchor="end" font-size="11"',
      ),
    );
    for (const t of [0, 0.5, 1])
      parts.push(
        `<line x1="${f(ox)}" x2="${f(ox + plotW)}" y1="${f(oy + plotH - t * plotH)}" y2="${f(oy + plotH - t * plotH)}" stroke="${t === 0 ? AXIS : GRID}"/>`,
        text(ox - 5, oy + plotH - t * plotH + 4, `${t * 100}%`, 'text-anchor="end" font-size="10"'),
      );
    for (const t of ticks) {
      const x = ox + xOf(t) * plotW;
      parts.push(
        `<line x1="${f(x)}" x2="${f(x)}" y1="${f(oy)}" y2="${f(oy + plotH + 4)}" stroke="${GRID}"/>`,
        text(x, oy + plotH + 15, tickText(t), 'text-anchor="middle" font-size="10"'),
      );
    }
    for (const [other, ys] of series)
      if (other !== name)
        parts.push(`<path d="${curve(ys, ox, oy)}" fill="none" stroke="#bdbdbd" stroke-width="1"/>`);
    const mx = ox + xOf(median) * plotW;
    parts.push(
      `<path d="${curve(xs, ox, oy)}" fill="none" stroke="${colour}" stroke-width="2.2"/>`,
      `<path d="M${f(mx)} ${f(oy + plotH)}V${f(oy)}" stroke="${colour}" stroke-width="1" stroke-dasharray="4 3"/>`,
      `<circle cx="${f(mx)}" cy="${f(oy + plotH / 2)}" r="3.5" fill="#fff" stroke="${colour}" stroke-width="2"/>`,
      text(ox + plotW / 2, oy + plotH + 28, "ms (log)", 'text-anchor="middle" font-size="10"'),
    );
  });
  parts.push(
    text(
      8,
      height - 8,
      columns === 1
        ? "Grey: the other configs; dashed: the median."
        : "Each panel: one config's calls (cumulative % of calls by latency), the other configs in grey; dashed: its median.",
      'font-size="11"',
    ),
  );
  return svg(spec.id, width, height, spec.name, parts.join(""), "", spec.cls);
}

/** A heat-map cell: its value as text, and how good it is in [0, 1] (null: no value). */
export interface HeatCell {
  text: string;
  good: number | null;
  title: string;
}

export interface HeatRow {
  label: string;
  /** APR or FPR. */
  metric: string;
  cells: HeatCell[];
}

const hex = (c: string) => [1, 3, 5].map((i) => Number.parseInt(c.slice(i, i + 2), 16));
const BAD = hex(OKABE_ITO.orange);
const MID = [247, 247, 247];
const GOOD = hex(OKABE_ITO.blue);

/**
 * The colour of a heat-map cell on a blue–orange scale (orange worse, near-white middle, blue
 * better), which reads the same to the common colour-vision deficiencies; and the text colour
 * that keeps its value readable on it.
 */
export function heatColour(good: number): { fill: string; ink: string } {
  const g = Math.min(1, Math.max(0, good));
  const [a, b, t] = g < 0.5 ? [BAD, MID, g / 0.5] : [MID, GOOD, (g - 0.5) / 0.5];
  const rgb = (a as number[]).map((v, i) => Math.round(v + (((b as number[])[i] as number) - v) * t));
  const [r, gr, bl] = rgb.map((v) => v / 255) as [number, number, number];
  const lin = (c: number) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4);
  const luminance = 0.2126 * lin(r) + 0.7152 * lin(gr) + 0.0722 * lin(bl);
  return {
    fill: `#${rgb.map((v) => v.toString(16).padStart(2, "0")).join("")}`,
    ink: luminance < 0.22 ? "#fff" : "#000",
  };
}

/** The heat map as a figure: rows of categories, a column per config, each cell's value written in it. */
export function heatSvg(spec: { id: string; name: string; configs: string[]; rows: HeatRow[] }): string {
  const { rows, configs } = spec;
  if (rows.length === 0) return "";
  const labelWidth = 190;
  const cellW = 72;
  const cellH = 28;
  const top = 40;
  const width = Math.max(labelWidth + configs.length * cellW + 10, 420);
  const bodyBottom = top + rows.length * cellH;
  const height = bodyBottom + 58;
  const parts: string[] = [];
  configs.forEach((c, j) => {
    parts.push(
      `<g>${text(labelWidth + cellW * (j + 0.5), top - 10, label(c, 10), 'text-anchor="middle" font-weight="bold"')}<title>${escapeHtml(c)}</title></g>`,
    );
  });
  rows.forEach((row, i) => {
    const y = top + i * cellH;
    parts.push(
      `<g>${text(labelWidth - 8, y + cellH / 2 + 4, `${label(row.label, 19)} · ${row.metric}`, 'text-anchor="end"')}<title>${escapeHtml(`${row.label} · ${row.metric}`)}</title></g>`,
    );
    row.cells.forEach((cell, j) => {
      const x = labelWidth + j * cellW;
      if (cell.good === null) {
        parts.push(
          `<rect x="${f(x)}" y="${f(y)}" width="${cellW}" height="${cellH}" fill="#fff" stroke="#fff"/>`,
          text(x + cellW / 2, y + cellH / 2 + 4, "–", 'text-anchor="middle" fill="#999"'),
        );
        return;
      }
      const { fill, ink } = heatColour(cell.good);
      parts.push(
        `<g><rect x="${f(x)}" y="${f(y)}" width="${cellW}" height="${cellH}" fill="${fill}" stroke="#fff" stroke-width="2"/>${text(x + cellW / 2, y + cellH / 2 + 4, cell.text, `text-anchor="middle" fill="${ink}" font-weight="bold"`)}<title>${escapeHtml(cell.title)}</title></g>`,
      );
    });
  });
  // The scale: worse to better, with its ends named.
  const steps = 10;
  const scaleX = labelWidth;
  const scaleW = Math.max(Math.min(configs.length * cellW, 300), 220);
  for (let k = 0; k < steps; k++) {
    const { fill } = heatColour((k + 0.5) / steps);
    parts.push(
      `<rect x="${f(scaleX + (k * scaleW) / steps)}" y="${f(bodyBottom + 16)}" width="${f(scaleW / steps + 0.5)}" height="10" fill="${fill}"/>`,
    );
  }
  parts.push(
    text(scaleX, bodyBottom + 42, "worse (APR low, FPR high)", 'font-size="11"'),
    text(scaleX + scaleW, bodyBottom + 42, "better", 'font-size="11" text-anchor="end"'),
  );
  return svg(spec.id, width, height, spec.name, parts.join(""));
}
