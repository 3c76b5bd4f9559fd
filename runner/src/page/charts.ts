/**
 * The charts of the report page, drawn with the inlined chart.js from `data` (defined just before
 * this script): rates with Wilson whiskers, ours vs the paper, the latency CDF. A bar of 0% is
 * drawn at a minimum height with a "0%" label, so that it reads as zero and not as missing; a
 * missing value (a config the paper did not have) draws nothing.
 */
export const CHARTS_SCRIPT = `const whiskers = {
  id: "whiskers",
  afterDatasetsDraw(chart) {
    const { ctx } = chart;
    chart.data.datasets.forEach((ds, i) => {
      if (!ds.intervals || !chart.isDatasetVisible(i)) return;
      chart.getDatasetMeta(i).data.forEach((bar, j) => {
        const iv = ds.intervals[j];
        if (!iv) return;
        const y = chart.scales.y;
        const lo = y.getPixelForValue(iv.lo * 100), hi = y.getPixelForValue(iv.hi * 100);
        ctx.save(); ctx.strokeStyle = "#333"; ctx.lineWidth = 1.2; ctx.beginPath();
        ctx.moveTo(bar.x, lo); ctx.lineTo(bar.x, hi);
        ctx.moveTo(bar.x - 4, lo); ctx.lineTo(bar.x + 4, lo);
        ctx.moveTo(bar.x - 4, hi); ctx.lineTo(bar.x + 4, hi);
        ctx.stroke(); ctx.restore();
      });
    });
  },
};
const zeroLabels = {
  id: "zeroLabels",
  afterDatasetsDraw(chart) {
    const { ctx } = chart;
    chart.data.datasets.forEach((ds, i) => {
      if (!chart.isDatasetVisible(i)) return;
      chart.getDatasetMeta(i).data.forEach((bar, j) => {
        if (ds.data[j] !== 0) return;
        const y = Math.min(bar.y, bar.base) - 4;
        ctx.save(); ctx.font = "bold 11px system-ui, sans-serif"; ctx.textAlign = "center";
        ctx.lineWidth = 3; ctx.strokeStyle = "#fff"; ctx.strokeText("0%", bar.x, y);
        ctx.fillStyle = "#333"; ctx.fillText("0%", bar.x, y);
        ctx.restore();
      });
    });
  },
};
const pctAxis = { y: { min: 0, max: 100, ticks: { callback: (v) => v + "%" } } };
const barOptions = { scales: pctAxis, animation: false, maintainAspectRatio: false };
const bar = (label, color, values, intervals) => ({
  label, backgroundColor: color, minBarLength: 3, data: values, intervals,
});
const rate = (m, key) => (m[key] ? m[key].value * 100 : null);
new Chart(document.getElementById("rates"), {
  type: "bar",
  data: {
    labels: data.configs,
    datasets: [
      bar("APR", "#4e79a7", data.metrics.map((m) => rate(m, "apr")), data.metrics.map((m) => m.apr)),
      bar("V-APR", "#59a14f", data.metrics.map((m) => rate(m, "vapr")), data.metrics.map((m) => m.vapr)),
      bar("FPR", "#e15759", data.metrics.map((m) => rate(m, "fpr")), data.metrics.map((m) => m.fpr)),
    ],
  },
  options: barOptions,
  plugins: [whiskers, zeroLabels],
});
new Chart(document.getElementById("paper"), {
  type: "bar",
  data: {
    labels: data.configs,
    datasets: [
      bar("APR (ours)", "#4e79a7", data.metrics.map((m) => rate(m, "apr"))),
      bar("APR (paper)", "#a0cbe8", data.paper.map((p) => (p ? p.apr * 100 : null))),
      bar("V-APR (ours)", "#59a14f", data.metrics.map((m) => rate(m, "vapr"))),
      bar("V-APR (paper)", "#8cd17d", data.paper.map((p) => (p ? p.vapr * 100 : null))),
    ],
  },
  options: barOptions,
  plugins: [zeroLabels],
});
const palette = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#9c755f"];
new Chart(document.getElementById("latency"), {
  type: "line",
  data: {
    datasets: Object.entries(data.latency).map(([name, xs], i) => ({
      label: name, borderColor: palette[i % palette.length], backgroundColor: palette[i % palette.length],
      pointRadius: 0, stepped: true, fill: false,
      data: xs.map((x, k) => ({ x, y: ((k + 1) / xs.length) * 100 })),
    })),
  },
  options: {
    animation: false, parsing: false, maintainAspectRatio: false,
    scales: { x: { type: "logarithmic", title: { display: true, text: "ms" } }, y: { min: 0, max: 100, title: { display: true, text: "% of calls" } } },
  },
});
`;
