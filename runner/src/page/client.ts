/**
 * The report page's interactions, plain DOM code over `data` (defined before this script): sortable
 * tables, the cases table with its filters, and the drill-down into a case's trials. Everything
 * it writes into the page goes through textContent, never through markup.
 */
export const PAGE_SCRIPT = `function el(tag, text, cls) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (cls) node.className = cls;
  return node;
}

/* Sortable tables: a header button sorts by its column (data-sort, else the text); a drill-down
   row (tr.detail) moves with the row before it. */
function sortKey(row, index) {
  const cell = row.cells[index];
  if (!cell) return null;
  const raw = cell.hasAttribute("data-sort") ? cell.getAttribute("data-sort") : cell.textContent.trim();
  if (raw === "" || raw === "–") return null;
  const n = Number(raw);
  return Number.isFinite(n) ? n : raw.toLowerCase();
}
function compareKeys(a, b) {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  if (typeof a === "number" && typeof b === "number") return a - b;
  return String(a).localeCompare(String(b), undefined, { numeric: true });
}
function sortTable(table, th) {
  const ascending = th.getAttribute("aria-sort") !== "ascending";
  for (const other of table.tHead.rows[0].cells) other.setAttribute("aria-sort", "none");
  th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
  const body = table.tBodies[0];
  const groups = [];
  for (const row of [...body.rows]) {
    if (row.classList.contains("detail") && groups.length) groups[groups.length - 1].push(row);
    else groups.push([row]);
  }
  const index = th.cellIndex;
  groups.sort((a, b) => {
    const ka = sortKey(a[0], index), kb = sortKey(b[0], index);
    if (ka === null || kb === null) return compareKeys(ka, kb);
    return ascending ? compareKeys(ka, kb) : compareKeys(kb, ka);
  });
  for (const group of groups) body.append(...group);
}
document.addEventListener("click", (event) => {
  const button = event.target.closest("table.sortable thead button");
  if (button) sortTable(button.closest("table"), button.closest("th"));
});

/* The cases table: one row per case, a cell per config; a row opens the case's trials. */
const OUTCOME_TEXT = { fired: "fired", stopped: "stopped", unjudged: "not judged (error)", passed: "passed", failed: "failed", "not run": "not run" };
const casesTable = document.getElementById("cases-table");
const trialsOf = data.cases.map(() => []);
for (const t of data.trials) trialsOf[t[0]].push(t);
const denialsOf = data.cases.map(() => []);
for (const d of data.denials) denialsOf[d[0]].push(d);
const filters = {
  category: document.getElementById("f-category"),
  suite: document.getElementById("f-suite"),
  config: document.getElementById("f-config"),
  outcome: document.getElementById("f-outcome"),
  text: document.getElementById("f-text"),
};

function kindText(c) {
  if (c[2] !== "attack") return "benign";
  return "attack · " + (c[3] || "–") + (c[6] === false ? " · not viable" : "");
}

/** A config's cell: fired/judged for an attack, failed/trials for a benign case. */
function configCell(c, trials) {
  const td = el("td");
  if (trials.length === 0) { td.textContent = "–"; td.className = "num na"; td.dataset.sort = ""; return td; }
  const ran = trials.filter((t) => t[3] !== "not run");
  const errors = trials.filter((t) => t[8]).length;
  if (ran.length === 0) { td.textContent = "not run"; td.className = "num na"; td.dataset.sort = ""; return td; }
  const attack = c[2] === "attack";
  const judged = ran.filter((t) => t[3] !== "unjudged");
  const bad = ran.filter((t) => t[3] === (attack ? "fired" : "failed")).length;
  td.append(judged.length ? bad + "/" + judged.length : "–");
  const layers = [...new Set(ran.filter((t) => t[3] === "stopped").map((t) => t[5] || "no decision"))];
  if (attack && layers.length) td.append(" ", el("small", layers.join(", ")));
  if (errors) td.append(" ", el("small", errors + " error" + (errors > 1 ? "s" : ""), "err"));
  td.className = "num " + (bad ? "bad" : judged.length ? "good" : "na");
  td.dataset.sort = judged.length ? String(bad / judged.length) : "";
  td.title = (attack ? "trials fired / trials judged" : "trials failed / trials") + (errors ? "; " + errors + " with a trial error" : "");
  return td;
}

function caseRow(c, i) {
  const tr = el("tr");
  tr.dataset.case = String(i);
  const th = el("th");
  th.scope = "row";
  const button = el("button", c[0], "case");
  button.type = "button";
  button.setAttribute("aria-expanded", "false");
  button.setAttribute("aria-controls", "case-detail-" + i);
  th.append(button);
  tr.append(th, el("td", c[8] || "–", "text title"), el("td", c[1]), el("td", c[12]), el("td", kindText(c)), el("td", c[4] + " · " + c[5]));
  data.trialConfigs.forEach((name, k) => {
    const td = configCell(c, trialsOf[i].filter((t) => t[1] === k));
    td.dataset.config = name;
    tr.append(td);
  });
  return tr;
}

function trialTable(i) {
  const config = filters.config.value;
  const table = el("table", null, "trials");
  table.append(el("caption", "Trials of " + data.cases[i][0] + (config ? " under " + config : "")));
  const head = table.createTHead().insertRow();
  for (const h of ["config", "trial", "outcome", "evidence", "stopped by (rule)", "ended", "error", "latency [ms]", "start [ms]", "response (bytes · sha256)", "sink (contacts · bytes)", "cwd"]) {
    const th = el("th", h); th.scope = "col"; head.append(th);
  }
  const body = table.createTBody();
  for (const t of trialsOf[i]) {
    const name = data.trialConfigs[t[1]];
    if (config && name !== config) continue;
    const [, , trial, outcome, evidence, layer, rule, ended, error, latency, start, bytes, sha, contacts, sinkBytes, cwd, notRun] = t;
    const tr = body.insertRow();
    tr.className = "outcome-" + outcome.replace(" ", "-");
    const th = el("th", name); th.scope = "row"; tr.append(th);
    tr.append(el("td", trial, "num"), el("td", OUTCOME_TEXT[outcome] || outcome, "outcome"));
    tr.append(el("td", evidence.length ? evidence.join(", ") : "–", "text"));
    tr.append(el("td", layer ? layer + (rule ? " (" + rule + ")" : "") : "–"));
    tr.append(el("td", ended || "–"), el("td", notRun || error || "–", error ? "text err" : "text"));
    tr.append(el("td", latency === null ? "–" : latency.toFixed(3), "num"), el("td", start === null ? "–" : start.toFixed(1), "num"));
    const response = el("td", bytes + " · ", "num hash");
    const code = el("code", sha ? sha.slice(0, 12) + "…" : "–");
    code.title = sha;
    response.append(code);
    tr.append(response, el("td", contacts + " · " + sinkBytes, "num"), el("td", cwd || "–"));
  }
  if (body.rows.length === 0) body.insertRow().append(el("td", "No trial under this config."));
  return table;
}

function detailRow(i) {
  const c = data.cases[i];
  const tr = el("tr", null, "detail");
  tr.id = "case-detail-" + i;
  const td = el("td");
  td.colSpan = casesTable.tHead.rows[0].cells.length;
  const facts = el("p", null, "facts");
  const viable = c[2] === "attack" ? (c[6] === null ? "unknown (no C0)" : c[6] ? "yes" : "no") : null;
  const items = [["category", c[1]], ["suite", c[12]], ["kind", kindText(c)], ["server", c[4]], ["tool", c[5]], ["viable", viable], ["tags", c[7]]];
  items.filter(([, v]) => v).forEach(([k, v], n) => facts.append(n ? " · " : "", el("b", k + ": "), v));
  const about = el("div", null, "about");
  if (c[8]) about.append(el("p", c[8], "case-title"));
  if (c[9]) about.append(el("p", c[9], "case-note"));
  if (c[10]) {
    const args = el("div", null, "case-args");
    args.append(el("b", (c[11] === "steps" ? "protocol steps" : "arguments (" + c[5] + ")") + ", as the case file writes them:"));
    const pre = el("pre");
    pre.append(el("code", c[10]));
    args.append(pre);
    about.append(args);
  }
  td.append(about, facts);
  const config = filters.config.value;
  const denials = denialsOf[i].filter((d) => !config || data.trialConfigs[d[1]] === config);
  if (denials.length) {
    const box = el("div", null, "kernel-denials");
    box.append(el("b", "Kernel denials after the call (those that could decide first, then the survived ones):"));
    const ul = el("ul");
    for (const [, k, list] of denials) {
      const li = el("li");
      li.append(el("b", data.trialConfigs[k] + ": "), list.join("; "));
      ul.append(li);
    }
    box.append(ul);
    td.append(box);
  }
  td.append(trialTable(i));
  tr.append(td);
  return tr;
}

function toggle(row) {
  const i = Number(row.dataset.case);
  const button = row.querySelector("button.case");
  const open = row.nextElementSibling && row.nextElementSibling.id === "case-detail-" + i;
  if (open) row.nextElementSibling.remove();
  else row.after(detailRow(i));
  button.setAttribute("aria-expanded", open ? "false" : "true");
}

function matches(c, i) {
  const f = { category: filters.category.value, suite: filters.suite.value, config: filters.config.value, outcome: filters.outcome.value, text: filters.text.value.trim().toLowerCase() };
  if (f.category && c[1] !== f.category) return false;
  if (f.suite && c[12] !== f.suite) return false;
  if (f.text && ![c[0], c[4], c[5], c[7], c[8]].some((s) => s.toLowerCase().includes(f.text))) return false;
  const trials = trialsOf[i].filter((t) => !f.config || data.trialConfigs[t[1]] === f.config);
  if (f.config && trials.length === 0) return false;
  switch (f.outcome) {
    case "fired": return trials.some((t) => t[3] === "fired");
    case "stopped": return trials.some((t) => t[3] === "stopped");
    case "benign-failed": return trials.some((t) => t[3] === "failed");
    case "error": return trials.some((t) => t[8]);
    default: return true;
  }
}

function applyFilters() {
  const config = filters.config.value;
  for (const cell of casesTable.querySelectorAll("[data-config]")) cell.hidden = Boolean(config) && cell.dataset.config !== config;
  let shown = 0;
  for (const row of casesTable.tBodies[0].rows) {
    if (row.classList.contains("detail")) continue;
    const i = Number(row.dataset.case);
    const show = matches(data.cases[i], i);
    row.hidden = !show;
    shown += show ? 1 : 0;
    const detail = row.nextElementSibling;
    if (detail && detail.classList.contains("detail")) {
      detail.remove();
      if (show) row.after(detailRow(i));
      else row.querySelector("button.case").setAttribute("aria-expanded", "false");
    }
  }
  document.getElementById("case-count").textContent = "Showing " + shown + " of " + data.cases.length + " cases.";
}

if (casesTable) {
  const body = casesTable.tBodies[0];
  data.cases.forEach((c, i) => body.append(caseRow(c, i)));
  body.addEventListener("click", (event) => {
    const row = event.target.closest("tr");
    if (row && !row.classList.contains("detail") && row.dataset.case !== undefined) toggle(row);
  });
  for (const control of Object.values(filters)) control.addEventListener("input", applyFilters);
  document.getElementById("case-filters").addEventListener("reset", () => setTimeout(applyFilters));
  applyFilters();
}
`;
