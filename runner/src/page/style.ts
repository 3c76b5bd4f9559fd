/** The report page's stylesheet: readable on screen, and printable (no controls, tables whole). */
export const PAGE_STYLE = `:root { --line: #d0d4d9; --muted: #667; --good: #d6e8f5; --bad: #fbe3bd; --accent: #1f5fa8; }
body { font: 14px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 80rem; padding: 0 1rem; color: #1d2126; overflow-wrap: break-word; }
h1 { font-size: 1.6rem; margin-bottom: .25rem; overflow-wrap: anywhere; } h2 { font-size: 1.25rem; margin-top: 2.2rem; border-bottom: 1px solid var(--line); padding-bottom: .2rem; }
h1, h2, h3 { font-weight: 600; } h3 { font-size: 1.05rem; margin-top: 1.6rem; }
nav.toc { display: flex; flex-wrap: wrap; gap: .2rem 1rem; margin: .8rem 0; } nav.toc a { color: var(--accent); }
.lede { color: var(--muted); margin-top: 0; }
.caveat { border-left: 4px solid #d98e04; background: #fff6e0; padding: .6rem 1rem; margin: 1rem 0; }
.caveat p { margin: .2rem 0; } .note { color: var(--muted); max-width: 60rem; }
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 30rem), 1fr)); gap: 1.5rem; }
.charts > .wide { grid-column: 1 / -1; } .charts h3 { margin-top: .5rem; }
figure.figure { margin: 0; min-width: 0; } figure.figure figcaption p { margin: .2rem 0; }
.svg-box svg { display: block; width: 100%; height: auto; }
.svg-box svg.narrow-only { display: none; }
@media (max-width: 40rem) { .svg-box svg.wide-only { display: none; } .svg-box svg.narrow-only { display: block; } }
.downloads { display: flex; gap: .4rem; align-items: center; margin-top: .3rem; font-size: .85rem; color: var(--muted); }
.downloads button { font: inherit; padding: .15rem .6rem; border: 1px solid var(--line); border-radius: 3px; background: #f6f7f9; color: var(--accent); cursor: pointer; }
details.wide > summary { cursor: pointer; color: var(--accent); }
.scroll { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; margin: .6rem 0 1.2rem; font-variant-numeric: tabular-nums; }
caption { caption-side: top; text-align: left; color: var(--muted); padding-bottom: .35rem; max-width: 60rem; }
th, td { border: 1px solid var(--line); padding: .3rem .55rem; text-align: left; vertical-align: top; }
thead th { background: #f2f4f7; text-align: center; vertical-align: bottom; } thead th:first-child { text-align: left; }
th[scope="row"] { font-weight: 600; white-space: nowrap; }
td.num { text-align: right; white-space: nowrap; }
td.text { max-width: 36rem; overflow-wrap: break-word; } td.ids { font-size: .85em; }
#ours-vs-paper td:nth-child(7) { border-left: 3px double #9aa3ad; } #ours-vs-paper td:nth-child(n+7) { color: #445; }
td.na, td.zero { color: #9aa; } small { color: var(--muted); font-weight: normal; }
th button { font: inherit; font-weight: 600; border: 0; background: none; padding: 0; cursor: pointer; color: inherit; text-align: inherit; max-width: 9rem; }
th[aria-sort] button::after { content: " ↕"; content: " ↕" / ""; color: #aab; }
th[aria-sort="ascending"] button::after { content: " ▲"; content: " ▲" / ""; color: var(--accent); }
th[aria-sort="descending"] button::after { content: " ▼"; content: " ▼" / ""; color: var(--accent); }
button:focus-visible, select:focus-visible, input:focus-visible, a:focus-visible { outline: 2px solid var(--accent); outline-offset: 2px; }
table.heat td { min-width: 3.5rem; text-align: center; } table.heat th small { display: block; } table.heat thead th { white-space: nowrap; }
form.filters { display: flex; flex-wrap: wrap; gap: .6rem 1.2rem; align-items: end; margin: .8rem 0; padding: .6rem .8rem; background: #f6f7f9; border: 1px solid var(--line); }
form.filters label { display: flex; flex-direction: column; font-size: .85rem; color: var(--muted); }
form.filters select, form.filters input { font: inherit; padding: .2rem .3rem; min-width: 10rem; max-width: 100%; }
#cases-table td.good { background: var(--good); } #cases-table td.bad { background: var(--bad); }
#cases-table td.good::before { content: "✓ "; content: "✓ " / ""; color: #0072b2; } #cases-table td.bad::before { content: "✗ "; content: "✗ " / ""; color: #a34a00; }
#cases-table td.title { min-width: 12rem; max-width: 22rem; }
#cases-table > tbody > tr:not(.detail) { cursor: pointer; } #cases-table > tbody > tr:not(.detail):hover > * { box-shadow: inset 0 2px 0 #c7d3e3, inset 0 -2px 0 #c7d3e3; }
#cases-table td small.err, td.err { color: #b3261e; }
button.case { font: inherit; font-weight: 600; color: var(--accent); background: none; border: 0; padding: 0; cursor: pointer; text-decoration: underline; }
tr.detail > td { background: #fafbfc; text-align: left; padding: .6rem .8rem; }
tr.detail p.facts { margin: 0 0 .4rem; }
tr.detail .about { max-width: 60rem; } tr.detail p.case-title { font-weight: 600; margin: 0 0 .3rem; } tr.detail p.case-note { margin: 0 0 .3rem; color: var(--muted); }
tr.detail pre { white-space: pre-wrap; overflow-wrap: anywhere; background: #f2f4f7; border: 1px solid var(--line); padding: .4rem .6rem; margin: .2rem 0 .6rem; font-size: .85rem; }
table.trials { margin: 0; font-size: .9em; } table.trials caption { font-weight: 600; color: inherit; }
table.trials tr.outcome-fired td.outcome, table.trials tr.outcome-failed td.outcome { background: var(--bad); }
table.trials tr.outcome-stopped td.outcome, table.trials tr.outcome-passed td.outcome { background: var(--good); }
td.hash code { font-size: .9em; }
tr.detail .kernel-denials { max-width: 60rem; margin: 0 0 .5rem; } tr.detail .kernel-denials ul { margin: .2rem 0; padding-left: 1.2rem; } tr.detail .kernel-denials li { overflow-wrap: anywhere; font-size: .9em; }
.caveat strong { color: #7a4f00; }
@media print {
  body { margin: 0; max-width: none; font-size: 11px; } nav.toc, form.filters, .downloads, details.wide { display: none; }
  .svg-box svg.narrow-only { display: none; } .svg-box svg.wide-only { display: block; }
  .scroll { overflow: visible; } .charts { grid-template-columns: repeat(2, minmax(0, 1fr)); }
  tr, figure.figure { break-inside: avoid; } h2 { break-after: avoid; }
  button.case { color: inherit; text-decoration: none; } th[aria-sort] button::after { content: ""; }
}
`;
