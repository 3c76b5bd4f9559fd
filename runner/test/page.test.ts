/**
 * The report page in a real browser: `mcpguard report` builds index.html from trials.ndjson alone,
 * and headless Chromium loads it offline. The tables, the charts and the drill-down render, sorting
 * and filters work, markup in the records stays text, and nothing is fetched or logged as an error.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../src/cli.ts";
import type { TrialRecord } from "../src/trial.ts";
import { record } from "./records.ts";

const CHROMIUM = "/usr/bin/chromium";
const missing = existsSync(CHROMIUM)
  ? ""
  : `${CHROMIUM} is missing (npm run setup installs the Debian package chromium)`;
if (missing) console.log(`skipping the report page in Chromium: ${missing}`);

const HOSTILE_ID = "XS-01<img src=x onerror=alert(1)>";
const HOSTILE_EVIDENCE = "</script><script>alert(2)</script>";
const HOSTILE_ERROR = 'boom"><svg onload=alert(3)></svg>';
const HOSTILE_CONFIG = "C-x'\"><img src=x onerror=alert(4)>";
const SHA = "ab".repeat(32);

/** Two configs (and a hostile one) on five core cases, two trials each; one error, one broken benign call. */
function trials(): TrialRecord[] {
  const out: TrialRecord[] = [];
  for (const trial of [1, 2]) {
    out.push(
      record({ config: "C0", id: "FR-01", trial, fired: true, evidence: ["secret_in:response:ssh_key"] }),
      record({
        config: "C-full",
        id: "FR-01",
        trial,
        stoppedBy: "L3:landlock",
        stoppedRule: "landlock:openat",
        ended: "failed",
        responseBytes: 120,
        responseSha256: SHA,
      }),
      record({
        config: "C0",
        id: "FR-05",
        trial,
        fired: true,
        visibility: "argument",
        evidence: ["file_written"],
      }),
      record({
        config: "C-full",
        id: "FR-05",
        trial,
        visibility: "argument",
        stoppedBy: "L1",
        ended: "refused",
      }),
      record({ config: "C0", id: "EV-01", trial, category: "env_leak", fired: true }),
      record({
        config: "C-full",
        id: "EV-01",
        trial,
        category: "env_leak",
        ...(trial === 2 ? { fired: null, error: "the session never started" } : { ended: "answered" }),
      }),
      record({ config: "C0", id: "BN-01", trial, kind: "benign", latencyMs: 2 + trial }),
      record({
        config: "C-full",
        id: "BN-01",
        trial,
        kind: "benign",
        passed: false,
        stoppedBy: "L2",
        latencyMs: 3 + trial,
      }),
      record({ config: "C0", id: HOSTILE_ID, trial, fired: true, evidence: [HOSTILE_EVIDENCE] }),
      record({ config: "C-full", id: HOSTILE_ID, trial, fired: null, error: HOSTILE_ERROR }),
      record({ config: HOSTILE_CONFIG, id: "BN-01", trial, kind: "benign", latencyMs: 4 }),
    );
  }
  return out;
}

const ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

describe.skipIf(missing !== "")("the report page in Chromium", () => {
  const dir = mkdtempSync(join(tmpdir(), "mcpguard-page-"));
  const profile = mkdtempSync(join(tmpdir(), "mcpguard-chromium-"));
  const url = pathToFileURL(join(dir, "index.html")).href;
  const problems: string[] = [];
  const requests: string[] = [];
  const dialogs: string[] = [];
  let browser: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    writeFileSync(
      join(dir, "trials.ndjson"),
      `${trials()
        .map((t) => JSON.stringify(t))
        .join("\n")}\n`,
    );
    expect(await main("report", [dir])).toBe(0);
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: ARGS,
      viewport: { width: 1280, height: 900 },
    });
    page = await browser.newPage();
    page.on("console", (m) => {
      if (m.type() === "error" || m.type() === "warning") problems.push(`console ${m.type()}: ${m.text()}`);
    });
    page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
    page.on("requestfailed", (r) => problems.push(`request failed: ${r.url()}`));
    page.on("request", (r) => requests.push(r.url()));
    page.on("dialog", (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    await page.goto(url, { waitUntil: "load" });
  });

  afterAll(async () => {
    await browser?.close();
    rmSync(dir, { recursive: true, force: true });
    rmSync(profile, { recursive: true, force: true });
  });

  const texts = (selector: string) =>
    page.$$eval(selector, (nodes) => nodes.map((n) => (n.textContent ?? "").trim()));
  const visibleCases = () =>
    page.$$eval("#cases-table > tbody > tr:not(.detail):not([hidden]) > th", (nodes) =>
      nodes.map((n) => n.textContent ?? ""),
    );

  it("renders the tables from trials.ndjson, with the caveat of a partial run", async () => {
    expect(readFileSync(join(dir, "summary.md"), "utf8")).toContain("5 of 82 core cases");
    expect(await texts("#ours-vs-paper tbody th")).toEqual(["C0", "C-full", HOSTILE_CONFIG]);
    const caveat = await page.locator(".caveat").textContent();
    expect(caveat).toContain("This run covers 5 of 82 core cases (4 of 61 attacks, 1 of 21 benign)");
    expect(caveat).toContain("the paper's numbers are for the full benchmark");
    expect(caveat).toMatch(/Under C-full, 1 case \(EV-01\) had fewer than 2 judged trials/);
    // The heat map's benign row holds the FPR of every config, not dashes.
    const benign = await page
      .locator("table.heat tbody tr", { hasText: /^benign/ })
      .locator("td")
      .allTextContents();
    expect(benign).toEqual(["0%", "100%", "0%"]);
    expect(await page.locator("#errors").textContent()).toContain("the session never started");
  });

  it("draws every chart, and a 0% bar has a visible height", async () => {
    const charts = await page.$$eval("canvas", (canvases) =>
      canvases.map((canvas) => {
        // The page's DOM, typed by hand: the runner's tsconfig has no DOM library.
        const c = canvas as unknown as {
          id: string;
          width: number;
          height: number;
          getContext(kind: "2d"): { getImageData(...box: number[]): { data: Uint8ClampedArray } } | null;
        };
        const pixels =
          c.getContext("2d")?.getImageData(0, 0, c.width, c.height).data ?? new Uint8ClampedArray();
        let drawn = 0;
        for (let i = 3; i < pixels.length; i += 4) if ((pixels[i] ?? 0) > 0) drawn++;
        return { id: c.id, width: c.width, drawn };
      }),
    );
    expect(charts.map((c) => c.id)).toEqual(["rates", "paper", "latency"]);
    for (const c of charts) {
      expect(c.width, c.id).toBeGreaterThan(100);
      expect(c.drawn, c.id).toBeGreaterThan(2000);
    }
    // C0's APR is 0: its bar has a height, not none.
    const zeroBar = await page.evaluate(() => {
      interface Bar {
        base: number;
        y: number;
      }
      interface ChartLike {
        data: { datasets: { data: (number | null)[] }[] };
        getDatasetMeta(i: number): { data: Bar[] };
      }
      const { Chart } = globalThis as unknown as { Chart: { getChart(id: string): ChartLike } };
      const chart = Chart.getChart("rates");
      const bar = chart.getDatasetMeta(0).data[0] as Bar;
      return { value: chart.data.datasets[0]?.data[0], height: Math.abs(bar.base - bar.y) };
    });
    expect(zeroBar.value).toBe(0);
    expect(zeroBar.height).toBeGreaterThanOrEqual(2);
  });

  it("opens a case's trials under every config, and closes them", async () => {
    const row = page.locator("#cases-table > tbody > tr", { hasText: "FR-01" }).first();
    await row.click();
    const detail = page.locator("#cases-table tr.detail");
    await expect.poll(() => detail.count()).toBe(1);
    expect(await row.locator("button.case").getAttribute("aria-expanded")).toBe("true");
    const trialRows = await texts("#cases-table tr.detail table.trials tbody tr");
    expect(trialRows).toHaveLength(4);
    const text = await detail.textContent();
    expect(text).toContain("L3:landlock (landlock:openat)");
    expect(text).toContain("secret_in:response:ssh_key");
    expect(text).toContain("120 · abababababab…");
    // The full digest is on the short one.
    expect(await detail.locator(`code[title="${SHA}"]`).count()).toBe(2);
    // The keyboard opens and closes it too.
    await row.locator("button.case").press("Enter");
    expect(await detail.count()).toBe(0);
  });

  it("sorts a column by clicking its header, both ways", async () => {
    const header = page.locator("#cases-table thead th", { hasText: "case" }).first();
    await header.locator("button").click();
    expect(await header.getAttribute("aria-sort")).toBe("ascending");
    const up = await visibleCases();
    expect(up).toEqual([...up].sort((a, b) => a.localeCompare(b, undefined, { numeric: true })));
    await header.locator("button").click();
    expect(await header.getAttribute("aria-sort")).toBe("descending");
    expect(await visibleCases()).toEqual([...up].reverse());
    // A numeric column of Table 1: APR, lowest first.
    await page.locator("#ours-vs-paper thead th", { hasText: /^APR/ }).locator("button").click();
    expect((await texts("#ours-vs-paper tbody th"))[0]).toBe("C0");
  });

  it("filters the cases by outcome, config and category", async () => {
    await page.selectOption("#f-outcome", "error");
    expect((await visibleCases()).sort()).toEqual(["EV-01", HOSTILE_ID].sort());
    await page.selectOption("#f-outcome", "benign-failed");
    await page.selectOption("#f-config", "C-full");
    expect(await visibleCases()).toEqual(["BN-01"]);
    expect(await page.locator('#cases-table thead th[data-config="C0"]').isHidden()).toBe(true);
    expect(await page.locator("#case-count").textContent()).toBe("Showing 1 of 5 cases.");
    await page.selectOption("#f-outcome", "");
    await page.selectOption("#f-config", "");
    await page.selectOption("#f-category", "env_leak");
    expect(await visibleCases()).toEqual(["EV-01"]);
    await page.click("#case-filters button[type=reset]");
    await expect.poll(visibleCases).toHaveLength(5);
  });

  it("shows markup from the records as text: no injected element, no dialog, nothing fetched", async () => {
    const row = page.locator("#cases-table > tbody > tr", { hasText: "XS-01" }).first();
    await row.click();
    const detail = await page.locator("#cases-table tr.detail").textContent();
    expect(detail).toContain(HOSTILE_EVIDENCE);
    expect(detail).toContain(HOSTILE_ERROR);
    expect(await row.locator("th").textContent()).toBe(HOSTILE_ID);
    expect(await page.locator("img, svg").count()).toBe(0);
    expect(await page.locator("script").count()).toBe(2);
    expect(await page.title()).toBe("MCPGuard benchmark — t");
    expect(dialogs).toEqual([]);
    expect(problems).toEqual([]);
    expect(new Set(requests)).toEqual(new Set([url]));
  });
});
