/**
 * The report page in a real browser: `mcpguard report` builds index.html from trials.ndjson alone,
 * and headless Chromium loads it offline. The tables, the figures and the drill-down render, sorting
 * and filters work, markup in the records stays text, and nothing is fetched or logged as an error.
 * Each figure downloads as an SVG that parses and a PNG, and at 390 px the page does not overflow.
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
const HOSTILE_TITLE = "<img src=x onerror=alert(5)> title";
const FR01_TITLE = "read_file returns the SSH key";
const FR01_ARGS = { path: "{{home}}/.ssh/id_rsa", note: "</pre><b>bold</b>" };
const SHA = "ab".repeat(32);
const EXTENSION_TITLE = "a case beyond the paper's set";

/**
 * Two configs (and a hostile one) on five core cases and an extension case, two trials each; one
 * error, one broken benign call, a kernel denial.
 */
function trials(): TrialRecord[] {
  const out: TrialRecord[] = [];
  for (const trial of [1, 2]) {
    out.push(
      record({
        config: "C0",
        id: "FR-01",
        trial,
        fired: true,
        evidence: ["secret_in:response:ssh_key"],
        title: FR01_TITLE,
        note: "The key's canary is fresh per trial.",
        arguments: FR01_ARGS,
      }),
      record({
        config: "C-full",
        id: "FR-01",
        trial,
        title: FR01_TITLE,
        arguments: FR01_ARGS,
        stoppedBy: "L3:landlock",
        stoppedRule: "landlock:openat",
        kernelDenials: [
          {
            backend: "landlock",
            syscall: "openat",
            target: "{{trial}}/home/.ssh/id_rsa",
            access: "r",
            count: 1,
            when: "call",
            survived: null,
          },
        ],
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
      record({
        config: "C0",
        id: HOSTILE_ID,
        trial,
        fired: true,
        evidence: [HOSTILE_EVIDENCE],
        title: HOSTILE_TITLE,
        arguments: { text: HOSTILE_EVIDENCE },
      }),
      record({ config: "C-full", id: HOSTILE_ID, trial, fired: null, error: HOSTILE_ERROR }),
      record({ config: HOSTILE_CONFIG, id: "BN-01", trial, kind: "benign", latencyMs: 4 }),
      // A case of a core category beyond the manifest: the extension suite.
      record({ config: "C0", id: "FR-99", trial, fired: true, suite: "extension", title: EXTENSION_TITLE }),
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
    // Each caveat under the label of what it is: the subset is partial, the extension case extends it.
    const labels = await page.$$eval(".caveat p[data-caveat]", (nodes) =>
      nodes.map((n) => [n.getAttribute("data-caveat"), n.querySelector("strong")?.textContent]),
    );
    // (the subset, the cases C-full and the hostile config ran, EV-01's trial error: partial)
    expect(labels).toEqual([
      ...Array.from({ length: 4 }, () => ["partial", "Partial run."]),
      ["extended", "Extended run."],
    ]);
    expect(await page.locator("figure[data-figure=paper] figcaption").textContent()).toContain(
      "Partial run. Extended run. See the caveats above Table 1.",
    );
    // The kernel's denials beside the credited layers, per config.
    const kernel = await page.$$eval("#kernel-denials tbody tr", (rows) =>
      rows.map((r) => [...r.children].map((c) => (c.textContent ?? "").trim())),
    );
    expect(kernel).toContainEqual(["C-full", "2", "2", "0", "0"]);
    expect(kernel).toContainEqual(["C0", "0", "0", "0", "0"]);
    // The heat map's benign row holds the FPR of every config, not dashes.
    const benign = await page
      .locator("table.heat tbody tr", { hasText: /^benign/ })
      .locator("td")
      .allTextContents();
    expect(benign).toEqual(["0%", "100%", "0%"]);
    expect(await page.locator("#errors").textContent()).toContain("the session never started");
  });

  it("draws every figure as SVG, and a 0% bar has a visible height and a label", async () => {
    const figures = await page.$$eval("figure[data-figure]", (nodes) =>
      nodes.map((n) => ({
        name: n.getAttribute("data-figure"),
        svgs: [...n.querySelectorAll("svg")].map((svg) => ({
          id: svg.id,
          shown: svg.getClientRects().length > 0,
          width: svg.getBoundingClientRect().width,
          marks: svg.querySelectorAll("rect, path").length,
        })),
        buttons: [...n.querySelectorAll("button[data-download]")].map((b) => b.textContent),
      })),
    );
    expect(figures.map((f) => f.name)).toEqual(["rates", "paper", "latency-cdf", "heat-map"]);
    for (const f of figures) {
      expect(f.buttons, f.name ?? "").toEqual(["SVG", "PNG"]);
      const shown = f.svgs.filter((s) => s.shown);
      expect(shown, f.name ?? "").toHaveLength(1);
      expect(shown[0]?.width, f.name ?? "").toBeGreaterThan(200);
      expect(shown[0]?.marks, f.name ?? "").toBeGreaterThan(8);
    }
    // C0's APR is 0: its bar has a height, not none, and says 0%.
    const zero = await page.$eval("#chart-rates", (svg) => {
      const bar = [...svg.querySelectorAll("rect")].find((r) =>
        (r.querySelector("title")?.textContent ?? "").startsWith("C0, APR: 0.0%"),
      );
      return {
        height: Number(bar?.getAttribute("height")),
        labels: [...svg.querySelectorAll("text")].filter((t) => t.textContent === "0%").length,
      };
    });
    expect(zero.height).toBeGreaterThanOrEqual(2);
    expect(zero.labels).toBeGreaterThan(0);
    // The heat map writes each value in its cell.
    const cells = await page.$$eval("#chart-heat g > text", (nodes) => nodes.map((n) => n.textContent));
    expect(cells).toContain("100%");
  });

  it("opens a case's trials under every config, and closes them", async () => {
    const row = page.locator("#cases-table > tbody > tr", { hasText: "FR-01" }).first();
    await row.click();
    const detail = page.locator("#cases-table tr.detail");
    await expect.poll(() => detail.count()).toBe(1);
    expect(await row.locator("button.case").getAttribute("aria-expanded")).toBe("true");
    const trialRows = await texts("#cases-table tr.detail table.trials tbody tr");
    expect(trialRows).toHaveLength(4);
    // The case's title, note and arguments as the case file writes them.
    expect(await detail.locator("p.case-title").textContent()).toBe(FR01_TITLE);
    expect(await detail.locator("p.case-note").textContent()).toBe("The key's canary is fresh per trial.");
    expect(JSON.parse((await detail.locator(".case-args pre").textContent()) ?? "")).toEqual(FR01_ARGS);
    const text = await detail.textContent();
    expect(text).toContain("L3:landlock (landlock:openat)");
    expect(text).toContain("secret_in:response:ssh_key");
    expect(text).toContain("120 · abababababab…");
    expect(await detail.locator(".kernel-denials li").allTextContents()).toEqual([
      "C-full: landlock:openat {{trial}}/home/.ssh/id_rsa",
    ]);
    expect(text).toContain("suite: core");
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
    expect(await page.locator("#case-count").textContent()).toBe("Showing 1 of 6 cases.");
    await page.selectOption("#f-outcome", "");
    await page.selectOption("#f-config", "");
    await page.selectOption("#f-category", "env_leak");
    expect(await visibleCases()).toEqual(["EV-01"]);
    await page.click("#case-filters button[type=reset]");
    await expect.poll(visibleCases).toHaveLength(6);
  });

  it("shows each case's suite, and filters by it", async () => {
    const suiteColumn = await page.$$eval("#cases-table thead th", (ths) =>
      ths.findIndex((th) => (th.textContent ?? "").trim().startsWith("suite")),
    );
    expect(suiteColumn).toBeGreaterThan(0);
    const suiteOf = (id: string) =>
      page
        .locator("#cases-table > tbody > tr", { hasText: id })
        .first()
        .locator("td")
        .nth(suiteColumn - 1)
        .textContent();
    expect(await suiteOf("FR-99")).toBe("extension");
    expect(await suiteOf("FR-01")).toBe("core");
    await page.selectOption("#f-suite", "extension");
    expect(await visibleCases()).toEqual(["FR-99"]);
    await page.selectOption("#f-suite", "core");
    expect(await visibleCases()).not.toContain("FR-99");
    await page.click("#case-filters button[type=reset]");
    await expect.poll(visibleCases).toHaveLength(6);
  });

  it("shows markup from the records as text: no injected element, no dialog, nothing fetched", async () => {
    const row = page.locator("#cases-table > tbody > tr", { hasText: "XS-01" }).first();
    await row.click();
    const detail = await page.locator("#cases-table tr.detail").textContent();
    expect(detail).toContain(HOSTILE_EVIDENCE);
    expect(detail).toContain(HOSTILE_ERROR);
    expect(detail).toContain(HOSTILE_TITLE);
    expect(await row.locator("th").textContent()).toBe(HOSTILE_ID);
    expect(await page.locator("img").count()).toBe(0);
    expect(await page.locator("b", { hasText: /^bold$/ }).count()).toBe(0);
    // The only SVG elements are the figures'.
    expect(await page.locator("svg").count()).toBe(await page.locator("figure[data-figure] svg").count());
    expect(await page.locator("script").count()).toBe(1);
    expect(await page.title()).toBe("MCPGuard benchmark — t");
    expect(dialogs).toEqual([]);
    expect(problems).toEqual([]);
    expect(new Set(requests)).toEqual(new Set([url]));
  });
  /** Click a figure's download button and read the file it saves. */
  async function download(on: Page, figure: string, kind: "SVG" | "PNG") {
    const [file] = await Promise.all([
      on.waitForEvent("download"),
      on.locator(`figure[data-figure="${figure}"] button[data-download]`, { hasText: kind }).click(),
    ]);
    return { name: file.suggestedFilename(), bytes: readFileSync(await file.path()) };
  }

  /**
   * Code run in the page, as source: the runner's tsconfig has no DOM library, so these functions
   * are JavaScript the browser evaluates with one JSON argument.
   */
  const inPage = <T>(on: Page, source: string, arg: unknown = null) =>
    on.evaluate(`(${source})(${JSON.stringify(arg)})`) as Promise<T>;

  /** Pixels of a PNG (base64) that are not white, as Chromium decodes it. */
  const INKED = `async (b64) => {
    const image = new Image();
    image.src = "data:image/png;base64," + b64;
    await image.decode();
    const canvas = document.createElement("canvas");
    canvas.width = image.naturalWidth;
    canvas.height = image.naturalHeight;
    const ctx = canvas.getContext("2d");
    ctx.drawImage(image, 0, 0);
    const pixels = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
    let n = 0;
    for (let i = 0; i < pixels.length; i += 4) if (pixels[i] < 240 || pixels[i + 1] < 240 || pixels[i + 2] < 240) n++;
    return n;
  }`;

  /** An SVG file's text as an XML parser reads it. */
  const PARSE_SVG = `(text) => {
    const doc = new DOMParser().parseFromString(text, "image/svg+xml");
    const root = doc.documentElement;
    return {
      errors: doc.getElementsByTagName("parsererror").length,
      root: root.localName,
      ns: root.namespaceURI,
      width: Number(root.getAttribute("width")),
      marks: root.querySelectorAll("rect, path").length,
    };
  }`;

  /** The page's widths at its viewport, and where the shown figures end on the right. */
  const LAYOUT = `() => ({
    page: document.documentElement.scrollWidth,
    body: document.body.scrollWidth,
    figures: [...document.querySelectorAll("figure svg")]
      .filter((svg) => svg.getClientRects().length > 0)
      .map((svg) => ({ id: svg.id, right: svg.getBoundingClientRect().right })),
  })`;

  const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

  it("downloads each figure as an SVG that parses and as a PNG of twice its size", async () => {
    for (const figure of ["rates", "paper", "latency-cdf", "heat-map"]) {
      const svg = await download(page, figure, "SVG");
      expect(svg.name).toBe(`mcpguard-t-${figure}.svg`);
      const parsed = await inPage<{ width: number; marks: number }>(
        page,
        PARSE_SVG,
        svg.bytes.toString("utf8"),
      );
      expect(parsed, figure).toMatchObject({ errors: 0, root: "svg", ns: "http://www.w3.org/2000/svg" });
      expect(parsed.marks, figure).toBeGreaterThan(8);
      const png = await download(page, figure, "PNG");
      expect(png.name).toBe(`mcpguard-t-${figure}.png`);
      expect(png.bytes.subarray(0, 8).equals(PNG_SIGNATURE), figure).toBe(true);
      // IHDR holds the width, big-endian, at byte 16.
      expect(png.bytes.readUInt32BE(16), figure).toBe(parsed.width * 2);
      expect(await inPage<number>(page, INKED, png.bytes.toString("base64")), figure).toBeGreaterThan(1000);
    }
  });

  it("fits a 390 px screen: no horizontal overflow, the figures scaled down, one latency panel a row", async () => {
    const narrow = await browser.newPage();
    narrow.on("pageerror", (e) => problems.push(`page error (390 px): ${e.message}`));
    narrow.on("console", (m) => {
      if (m.type() === "error" || m.type() === "warning") problems.push(`console (390 px): ${m.text()}`);
    });
    await narrow.setViewportSize({ width: 390, height: 844 });
    await narrow.goto(url, { waitUntil: "load" });
    // A drill-down open, the widest thing the page holds.
    await narrow.locator("#cases-table > tbody > tr", { hasText: "FR-01" }).first().click();
    await expect.poll(() => narrow.locator("#cases-table tr.detail").count()).toBe(1);
    const layout = await inPage<{ page: number; body: number; figures: { id: string; right: number }[] }>(
      narrow,
      LAYOUT,
    );
    expect(layout.page).toBeLessThanOrEqual(390);
    expect(layout.body).toBeLessThanOrEqual(390);
    expect(layout.figures.map((f) => f.id)).toEqual([
      "chart-rates",
      "chart-paper",
      "chart-latency-narrow",
      "chart-heat",
    ]);
    for (const f of layout.figures) expect(f.right, f.id).toBeLessThanOrEqual(390);
    // The download saves the variant shown: the one-column latency panels (360 wide).
    const png = await download(narrow, "latency-cdf", "PNG");
    expect(png.bytes.readUInt32BE(16)).toBe(720);
    await narrow.close();
    expect(problems).toEqual([]);
  });
});
