/**
 * The report page's figures, drawn as SVG from the page's data (svg.ts): the rates with their
 * Wilson whiskers, ours beside the paper's Table 1, the latency CDF as small multiples, and the
 * heat map. Each is a <figure> with buttons that save it as SVG or PNG (DOWNLOAD_SCRIPT): the SVG
 * as it is in the page, the PNG drawn from it on a canvas at twice its size. Nothing is fetched.
 */
import { escapeHtml } from "./html.js";
import type { PageData } from "./model.js";
import { barChart, cdfPanels, type HeatRow, heatSvg, OKABE_ITO } from "./svg.js";

/** A figure: its heading, the SVG, and its download buttons (named after `name`). */
export function figure(name: string, title: string, svgMarkup: string, before = "", cls = ""): string {
  if (!svgMarkup) return "";
  return `<figure class="figure${cls ? ` ${cls}` : ""}" data-figure="${escapeHtml(name)}">
<figcaption><h3>${escapeHtml(title)}</h3>${before}</figcaption>
<div class="svg-box">${svgMarkup}</div>
<div class="downloads" role="group" aria-label="${escapeHtml(`Download: ${title}`)}"><span>Download</span><button type="button" data-download="svg">SVG</button><button type="button" data-download="png">PNG</button></div>
</figure>
`;
}

export function ratesSvg(data: PageData): string {
  const of = (key: "apr" | "vapr" | "fpr") => data.metrics.map((m) => (m[key] ? m[key].value : null));
  const intervals = (key: "apr" | "vapr" | "fpr") => data.metrics.map((m) => m[key]);
  return barChart({
    id: "chart-rates",
    name: "APR, V-APR and FPR per config, with 95% Wilson intervals",
    labels: data.configs,
    series: [
      {
        label: "APR",
        colour: OKABE_ITO.blue,
        pattern: "solid",
        values: of("apr"),
        intervals: intervals("apr"),
      },
      {
        label: "V-APR",
        colour: OKABE_ITO.green,
        pattern: "hatch",
        values: of("vapr"),
        intervals: intervals("vapr"),
      },
      {
        label: "FPR",
        colour: OKABE_ITO.vermillion,
        pattern: "dots",
        values: of("fpr"),
        intervals: intervals("fpr"),
      },
    ],
  });
}

export function paperSvg(data: PageData): string {
  const ours = (key: "apr" | "vapr") => data.metrics.map((m) => (m[key] ? m[key].value : null));
  const paper = (key: "apr" | "vapr") => data.paper.map((p) => (p ? p[key] : null));
  return barChart({
    id: "chart-paper",
    name: "Our APR and V-APR beside the paper's Table 1, per config",
    labels: data.configs,
    series: [
      { label: "APR (ours)", colour: OKABE_ITO.blue, pattern: "solid", values: ours("apr") },
      { label: "APR (paper)", colour: OKABE_ITO.blue, pattern: "hatch", values: paper("apr") },
      { label: "V-APR (ours)", colour: OKABE_ITO.green, pattern: "solid", values: ours("vapr") },
      { label: "V-APR (paper)", colour: OKABE_ITO.green, pattern: "cross", values: paper("vapr") },
    ],
  });
}

/**
 * The latency CDF, one panel per config: two panels a row, and a one-column variant that a narrow
 * screen shows instead (the download saves the one shown).
 */
export function latencySvg(data: PageData): string {
  const order = [...data.configs, ...Object.keys(data.latency).filter((c) => !data.configs.includes(c))];
  const spec = {
    name: "Tool call latency of benign cases, cumulative distribution per config (log ms)",
    samples: order
      .filter((c) => Object.hasOwn(data.latency, c))
      .map((c): [string, number[]] => [c, data.latency[c] ?? []]),
  };
  const wide = cdfPanels({ ...spec, id: "chart-latency", cls: "wide-only" });
  if (!wide || spec.samples.length < 2) return wide;
  return wide + cdfPanels({ ...spec, id: "chart-latency-narrow", columns: 1, cls: "narrow-only" });
}

export function heatMapSvg(configs: string[], rows: HeatRow[]): string {
  return heatSvg({
    id: "chart-heat",
    name: "APR of the attack cases and FPR of the benign cases, per category and config",
    configs,
    rows,
  });
}

/**
 * The download buttons: a figure's <svg> serialised as a standalone file, or drawn through an
 * <img> of that file onto a canvas at twice its size and saved as PNG. Blob and data: URLs only.
 */
export const DOWNLOAD_SCRIPT = `function svgFile(svg) {
  const clone = svg.cloneNode(true);
  clone.setAttribute("xmlns", "http://www.w3.org/2000/svg");
  return '<?xml version="1.0" encoding="UTF-8"?>\\n' + new XMLSerializer().serializeToString(clone) + "\\n";
}
function saveBlob(blob, name) {
  const a = document.createElement("a");
  a.href = URL.createObjectURL(blob);
  a.download = name;
  a.hidden = true;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10000);
}
function pngOf(svg, scale) {
  return new Promise((resolve, reject) => {
    const box = svg.viewBox.baseVal;
    const canvas = document.createElement("canvas");
    canvas.width = Math.round(box.width * scale);
    canvas.height = Math.round(box.height * scale);
    const image = new Image();
    image.onload = () => {
      const ctx = canvas.getContext("2d");
      ctx.fillStyle = "#fff";
      ctx.fillRect(0, 0, canvas.width, canvas.height);
      ctx.drawImage(image, 0, 0, canvas.width, canvas.height);
      canvas.toBlob((blob) => (blob ? resolve(blob) : reject(new Error("no PNG"))), "image/png");
    };
    image.onerror = () => reject(new Error("the SVG did not load as an image"));
    image.src = "data:image/svg+xml;charset=utf-8," + encodeURIComponent(svgFile(svg));
  });
}
const fileStem = "mcpguard-" + String(data.runId).replace(/[^A-Za-z0-9._-]+/g, "_").slice(0, 60) + "-";
document.addEventListener("click", (event) => {
  const button = event.target.closest("button[data-download]");
  if (!button) return;
  const fig = button.closest("figure[data-figure]");
  const svg = fig && [...fig.querySelectorAll("svg")].find((s) => s.getClientRects().length > 0);
  if (!svg) return;
  const name = fileStem + fig.dataset.figure;
  if (button.dataset.download === "svg") {
    saveBlob(new Blob([svgFile(svg)], { type: "image/svg+xml" }), name + ".svg");
    return;
  }
  button.disabled = true;
  pngOf(svg, 2)
    .then((blob) => saveBlob(blob, name + ".png"))
    .catch((error) => console.warn("PNG download: " + error.message))
    .finally(() => { button.disabled = false; });
});
`;
