/**
 * The one place the report page turns values into markup: every text and attribute value goes
 * through `escapeHtml`, every value embedded in a script through `scriptJson`, and tables are
 * built from cells, never from concatenated strings of markup.
 */
import type { Interval } from "../stats.js";

/** Text for HTML content or a quoted attribute value. */
export const escapeHtml = (value: string | number) =>
  String(value).replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

/**
 * JSON for a JavaScript literal inside <script>: `<`, `>` and `&` escaped, so no `</script>` or
 * `<!--` in a string can end or change the element, and U+2028/U+2029 escaped for older parsers.
 */
export function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(
    /[<>&\u2028\u2029]/g,
    (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

export const pct = (v: number | null | undefined, digits = 1) =>
  v === null || v === undefined ? "–" : `${(v * 100).toFixed(digits)}%`;
export const ms = (v: number | null | undefined, digits = 3) =>
  v === null || v === undefined ? "–" : v.toFixed(digits);

/** A heading and paragraphs of text. */
export const heading = (level: 2 | 3, text: string, id?: string) =>
  `<h${level}${id ? ` id="${escapeHtml(id)}"` : ""}>${escapeHtml(text)}</h${level}>\n`;
export const para = (text: string, cls?: string) =>
  `<p${cls ? ` class="${escapeHtml(cls)}"` : ""}>${escapeHtml(text)}</p>\n`;
export const list = (items: string[]) =>
  items.length ? `<ul>${items.map((i) => `<li>${escapeHtml(i)}</li>`).join("")}</ul>\n` : "";

/** A table cell: its text, and optionally the value it sorts by, a class and a tooltip. */
export interface Cell {
  text: string;
  /** Sort key (numbers sort numerically); the text when absent. */
  sort?: number | string | null;
  /** Smaller text after the main text (an interval, a count). */
  note?: string;
  cls?: string;
  title?: string;
}

export type CellLike = Cell | string | number;

const asCell = (c: CellLike): Cell => (typeof c === "object" ? c : { text: String(c) });

/** A rate with its interval: "45.9%" and, smaller, "[34.0, 58.3]"; sorts by the rate. */
export function rateCell(i: Interval | null | undefined, digits = 1): Cell {
  if (!i) return { text: "–", sort: null, cls: "na" };
  const p = (v: number) => (v * 100).toFixed(digits);
  return { text: pct(i.value, digits), note: `[${p(i.lo)}, ${p(i.hi)}]`, sort: i.value };
}

/** "k/n" that sorts by k/n (empty n: a dash). */
export function ratioCell(k: number | null | undefined, n: number | null | undefined): Cell {
  if (!n || k === null || k === undefined) return { text: "–", sort: null, cls: "na" };
  return { text: `${k}/${n}`, sort: k / n };
}

export function numCell(v: number | null | undefined, digits = 3): Cell {
  return v === null || v === undefined
    ? { text: "–", sort: null, cls: "na" }
    : { text: v.toFixed(digits), sort: v };
}

function td(cell: CellLike, header: boolean): string {
  const c = asCell(cell);
  // Numbers (cells that sort by one, and dashes for missing ones) align right.
  const cls = [c.cls, typeof c.sort === "number" || c.sort === null ? "num" : ""].filter(Boolean).join(" ");
  const attrs = [
    cls ? ` class="${escapeHtml(cls)}"` : "",
    c.title ? ` title="${escapeHtml(c.title)}"` : "",
    c.sort !== undefined ? ` data-sort="${escapeHtml(c.sort ?? "")}"` : "",
    header ? ' scope="row"' : "",
  ].join("");
  const note = c.note ? ` <small>${escapeHtml(c.note)}</small>` : "";
  const tag = header ? "th" : "td";
  return `<${tag}${attrs}>${escapeHtml(c.text)}${note}</${tag}>`;
}

export interface TableSpec {
  /** A short title, the table's caption. */
  caption?: string;
  /** What the table shows, in a paragraph before it. */
  note?: string;
  head: string[];
  /** The first cell of each row is its header. */
  rows: CellLike[][];
  /** Headers become sort buttons (aria-sort). */
  sortable?: boolean;
  cls?: string;
  id?: string;
}

/** A table with a caption, column headers and row headers; every value escaped. */
export function table(spec: TableSpec): string {
  const cls = [spec.sortable ? "sortable" : "", spec.cls ?? ""].filter(Boolean).join(" ");
  const head = spec.head
    .map((h) =>
      spec.sortable
        ? `<th scope="col" aria-sort="none"><button type="button">${escapeHtml(h)}</button></th>`
        : `<th scope="col">${escapeHtml(h)}</th>`,
    )
    .join("");
  const body = spec.rows
    .map((row) => `<tr>${row.map((cell, i) => td(cell, i === 0)).join("")}</tr>`)
    .join("\n");
  const note = spec.note ? para(spec.note, "note") : "";
  return `${note}<div class="scroll"><table${spec.id ? ` id="${escapeHtml(spec.id)}"` : ""}${cls ? ` class="${escapeHtml(cls)}"` : ""}>${
    spec.caption ? `<caption>${escapeHtml(spec.caption)}</caption>` : ""
  }<thead><tr>${head}</tr></thead><tbody>
${body}
</tbody></table></div>
`;
}
