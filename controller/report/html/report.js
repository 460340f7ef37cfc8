// report.html's view of a run: it draws what the controller put in #report-data (the page model
// of controller/report/report_page_model.cpp) and computes nothing a report must agree on, only
// colours, scales and which rows to show. Text from the run (agent names, messages) only ever
// goes in through textContent.
"use strict";

const pageErrors = [];
window.addEventListener("error", (e) => recordError(e.message || String(e)));
window.addEventListener("unhandledrejection", (e) => recordError(String(e.reason)));
const consoleError = console.error.bind(console);
console.error = (...args) => { recordError(args.join(" ")); consoleError(...args); };
function recordError(text) {
  pageErrors.push(text);
  document.documentElement.dataset.errors = JSON.stringify(pageErrors);
}

const FAIL_RGB = [215, 48, 31];
const NO_DATA_RGB = [238, 238, 238];
const SELF_RGB = [90, 90, 90];
const SERIES_COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22",
  "#7f7f7f", "#d62728"];
const MAX_CHART_STREAMS = 8;
// Where each chart's y axis starts, as uPlot drew it: the page's tests read it back.
const chartAxisMinimums = [];
const MATRIX_MAX_PX = 900;
const MAX_TABLE_ROWS = 100;

// ---- small DOM and number helpers -------------------------------------------------------------
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else node.setAttribute(key, value);
  }
  for (const child of children) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}
function table(headers, rows, rowClass) {
  const t = el("table", {}, el("tr", {}, ...headers.map((h) => el("th", { text: h }))));
  rows.forEach((cells, i) => {
    const tr = el("tr", rowClass ? { class: rowClass(i) || "" } : {});
    for (const cell of cells) {
      const numeric = typeof cell === "number";
      tr.append(el("td", numeric ? { class: "num" } : {}, cell === null || cell === undefined ? "–" : cell));
    }
    t.append(tr);
  });
  return t;
}
function siRate(bps) {
  if (bps === null || bps === undefined) return "–";
  const units = [[1e12, "Tb/s"], [1e9, "Gb/s"], [1e6, "Mb/s"], [1e3, "kb/s"]];
  for (const [scale, unit] of units) if (Math.abs(bps) >= scale) return (bps / scale).toFixed(2) + " " + unit;
  return bps.toFixed(0) + " b/s";
}
function count(n) { return n === null || n === undefined ? "–" : Math.round(n).toLocaleString("en-US"); }
function sci(x) { return x === null || x === undefined ? "–" : x === 0 ? "0" : x.toExponential(2); }
function seconds(s, suffix = "") {
  if (s === null || s === undefined) return "–";
  if (s <= 0) return "reached";
  if (s < 120) return s.toFixed(1) + " s" + suffix;
  if (s < 7200) return (s / 60).toFixed(1) + " min" + suffix;
  if (s < 172800) return (s / 3600).toFixed(1) + " h" + suffix;
  return (s / 86400).toFixed(1) + " days" + suffix;
}
// A field the report gives as a list or as one sentence, as text.
function joined(value, separator) {
  if (value === null || value === undefined) return "";
  return Array.isArray(value) ? value.join(separator) : String(value);
}
function ms(ns) { return ns === null || ns === undefined ? "–" : (ns / 1e6).toFixed(3) + " ms"; }
function badge(verdict) {
  const v = String(verdict || "incomplete").toLowerCase();
  // Only a verdict is red or green: a run that never started or was interrupted is no bad cable.
  const style = v === "pass" || v === "fail" ? v : "incomplete";
  return el("span", { class: "badge " + style, text: v.toUpperCase() });
}
function rgb(c) { return "rgb(" + c[0] + "," + c[1] + "," + c[2] + ")"; }
function mix(a, b, t) { return [0, 1, 2].map((i) => Math.round(a[i] + (b[i] - a[i]) * t)); }

// ---- the host x host matrix -------------------------------------------------------------------
// Each metric: how to read a pair's value and whether high is good. A pair is every stream whose
// traffic went sender -> receiver; receivers' numbers win over senders' where both exist.
const METRICS = {
  throughput_share: { label: "throughput, share of the best pair", good: "high" },
  loss_ratio: { label: "loss ratio", good: "low" },
  bit_errors: { label: "bit errors", good: "low" },
  ber_upper: { label: "BER upper bound", good: "low", log: true },
  retransmits: { label: "retransmits", good: "low" },
  completion_errors: { label: "completion errors", good: "low" },
  latency_p99_ns: { label: "latency p99", good: "low" },
};

function pairTable(test) {
  const n = test.hosts.length;
  const s = test.streams;
  const size = n * n;
  const pairs = {
    n, has: new Uint8Array(size), failed: new Uint8Array(size), rxThroughput: new Float64Array(size),
    txThroughput: new Float64Array(size), lost: new Float64Array(size), frames: new Float64Array(size),
    lossRatio: new Float64Array(size).fill(NaN), bitErrors: new Float64Array(size), berUpper: new Float64Array(size).fill(NaN),
    retransmits: new Float64Array(size), completionErrors: new Float64Array(size), latency: new Float64Array(size).fill(NaN),
  };
  for (let i = 0; i < s.id.length; i++) {
    const from = s.sender[i], to = s.receiver[i];
    if (from < 0 || to < 0) continue;
    const p = from * n + to;
    pairs.has[p] = 1;
    if (!s.passed[i]) pairs.failed[p] = 1;
    const receives = s.agent[i] === to;
    if (s.throughput_bps[i] !== null) {
      if (receives) pairs.rxThroughput[p] += s.throughput_bps[i];
      else pairs.txThroughput[p] += s.throughput_bps[i];
    }
    if (s.lost_frames[i] !== null) pairs.lost[p] += s.lost_frames[i];
    if (s.rx_frames[i] !== null) pairs.frames[p] += s.rx_frames[i];
    if (s.loss_ratio[i] !== null) pairs.lossRatio[p] = Math.max(isNaN(pairs.lossRatio[p]) ? 0 : pairs.lossRatio[p], s.loss_ratio[i]);
    if (s.bit_errors[i] !== null) pairs.bitErrors[p] += s.bit_errors[i];
    if (s.ber_upper[i] !== null) pairs.berUpper[p] = Math.max(isNaN(pairs.berUpper[p]) ? 0 : pairs.berUpper[p], s.ber_upper[i]);
    if (s.retransmits[i] !== null) pairs.retransmits[p] += s.retransmits[i];
    if (s.completion_errors[i] !== null) pairs.completionErrors[p] += s.completion_errors[i];
    if (s.latency_p99_ns[i] !== null) pairs.latency[p] = Math.max(isNaN(pairs.latency[p]) ? 0 : pairs.latency[p], s.latency_p99_ns[i]);
  }
  pairs.throughput = new Float64Array(size);
  let best = 0;
  for (let p = 0; p < size; p++) {
    pairs.throughput[p] = pairs.rxThroughput[p] > 0 ? pairs.rxThroughput[p] : pairs.txThroughput[p];
    best = Math.max(best, pairs.throughput[p]);
  }
  pairs.best = best;
  return pairs;
}

function pairValue(pairs, metric, p) {
  switch (metric) {
    case "throughput_share": return pairs.best > 0 ? pairs.throughput[p] / pairs.best : NaN;
    case "loss_ratio": return pairs.lossRatio[p];
    case "bit_errors": return pairs.bitErrors[p];
    case "ber_upper": return pairs.berUpper[p];
    case "retransmits": return pairs.retransmits[p];
    case "completion_errors": return pairs.completionErrors[p];
    case "latency_p99_ns": return pairs.latency[p];
  }
  return NaN;
}

// Green for good, through yellow, to orange for bad; red is kept for pairs that failed the test.
function colourFor(metric, value, range) {
  const GOOD = [26, 152, 80], MID = [254, 224, 139], BAD = [244, 109, 67];
  if (isNaN(value)) return NO_DATA_RGB;
  let t;
  if (METRICS[metric].good === "high") {
    // Shares of the best pair: the worst pair is orange once it is 10 % or more behind, so a slow
    // row stands out without a few per cent of noise colouring the whole matrix.
    t = (1 - value) / Math.max(0.1, 1 - range.min);
  } else if (range.max <= range.min) {
    t = value > 0 ? 1 : 0;
  } else if (METRICS[metric].log) {
    const lo = Math.log10(Math.max(range.min, 1e-300)), hi = Math.log10(range.max);
    t = hi > lo ? (Math.log10(Math.max(value, 1e-300)) - lo) / (hi - lo) : 0;
  } else {
    t = (value - range.min) / (range.max - range.min);
  }
  t = Math.max(0, Math.min(1, t));
  return t < 0.5 ? mix(GOOD, MID, t * 2) : mix(MID, BAD, (t - 0.5) * 2);
}

function drawMatrix(view) {
  const { test, pairs, canvas, metric } = view;
  const n = pairs.n;
  const cell = Math.max(1, Math.min(48, Math.floor(MATRIX_MAX_PX / Math.max(n, 1))));
  const label = cell >= 12 ? Math.min(140, 8 + 7 * Math.max(...test.hosts.map((h) => h.length))) : 0;
  view.cell = cell;
  view.label = label;
  canvas.width = label + n * cell;
  canvas.height = label + n * cell;
  const ctx = canvas.getContext("2d", { willReadFrequently: true });
  ctx.fillStyle = "#fff";
  ctx.fillRect(0, 0, canvas.width, canvas.height);
  const range = { min: Infinity, max: -Infinity };
  for (let p = 0; p < n * n; p++) {
    const v = pairValue(pairs, metric, p);
    if (!isNaN(v)) { range.min = Math.min(range.min, v); range.max = Math.max(range.max, v); }
  }
  // One pixel per cell in an ImageData, scaled up once: 65,280 cells in a few milliseconds.
  const image = ctx.createImageData(n, n);
  let cells = 0;
  for (let from = 0; from < n; from++) {
    for (let to = 0; to < n; to++) {
      const p = from * n + to;
      let c;
      if (from === to) c = pairs.has[p] ? colourFor(metric, pairValue(pairs, metric, p), range) : SELF_RGB;
      else if (pairs.failed[p]) c = FAIL_RGB;
      else if (!pairs.has[p]) c = NO_DATA_RGB;
      else c = colourFor(metric, pairValue(pairs, metric, p), range);
      if (from !== to) cells++;
      const o = p * 4;
      image.data[o] = c[0]; image.data[o + 1] = c[1]; image.data[o + 2] = c[2]; image.data[o + 3] = 255;
    }
  }
  const scratch = document.createElement("canvas");
  scratch.width = n; scratch.height = n;
  scratch.getContext("2d").putImageData(image, 0, 0);
  ctx.imageSmoothingEnabled = false;
  ctx.drawImage(scratch, label, label, n * cell, n * cell);
  if (cell >= 6) {
    ctx.strokeStyle = "#fff";
    ctx.lineWidth = 1;
    for (let i = 0; i <= n; i++) {
      ctx.beginPath(); ctx.moveTo(label + i * cell + 0.5, label); ctx.lineTo(label + i * cell + 0.5, label + n * cell); ctx.stroke();
      ctx.beginPath(); ctx.moveTo(label, label + i * cell + 0.5); ctx.lineTo(label + n * cell, label + i * cell + 0.5); ctx.stroke();
    }
  }
  if (label > 0) {
    ctx.fillStyle = "#222";
    ctx.font = "11px sans-serif";
    ctx.textBaseline = "middle";
    test.hosts.forEach((host, i) => {
      ctx.textAlign = "right";
      ctx.fillText(host, label - 4, label + i * cell + cell / 2);
      ctx.save();
      ctx.translate(label + i * cell + cell / 2, label - 4);
      ctx.rotate(-Math.PI / 2);
      ctx.textAlign = "left";
      ctx.fillText(host, 0, 0);
      ctx.restore();
    });
  }
  view.range = range;
  recordMatrixState(view, cells);
}

// What a test (or a person with devtools) can check without reading pixels off a screenshot:
// the cell count, and the colour actually drawn at each failing pair's cell.
function recordMatrixState(view, cells) {
  const { section, pairs, canvas, test } = view;
  const ctx = canvas.getContext("2d", { willReadFrequently: true });
  const n = pairs.n;
  const colourAt = (from, to) => {
    const x = view.label + to * view.cell + Math.floor(view.cell / 2);
    const y = view.label + from * view.cell + Math.floor(view.cell / 2);
    const d = ctx.getImageData(x, y, 1, 1).data;
    return rgb([d[0], d[1], d[2]]);
  };
  const failing = {}, sample = {};
  let failingCount = 0;
  for (let from = 0; from < n; from++) {
    for (let to = 0; to < n; to++) {
      if (from === to) continue;
      const key = test.hosts[from] + "->" + test.hosts[to];
      if (pairs.failed[from * n + to]) {
        failingCount++;
        if (failingCount <= 64) failing[key] = colourAt(from, to);
      } else if (n <= 24) {
        sample[key] = colourAt(from, to);
      }
    }
  }
  section.dataset.matrixHosts = String(n);
  section.dataset.matrixCells = String(cells);
  section.dataset.failingPairs = String(failingCount);
  section.dataset.failingColours = JSON.stringify(failing);
  section.dataset.passingColours = JSON.stringify(sample);
  section.dataset.failColour = rgb(FAIL_RGB);
}

function cellAt(view, event) {
  const rect = view.canvas.getBoundingClientRect();
  const x = (event.clientX - rect.left) * (view.canvas.width / rect.width) - view.label;
  const y = (event.clientY - rect.top) * (view.canvas.height / rect.height) - view.label;
  if (x < 0 || y < 0) return null;
  const to = Math.floor(x / view.cell), from = Math.floor(y / view.cell);
  if (from >= view.pairs.n || to >= view.pairs.n) return null;
  return { from, to };
}

function pairSummary(view, from, to) {
  const { pairs, test } = view;
  const p = from * pairs.n + to;
  const lines = [test.hosts[from] + " → " + test.hosts[to] + (pairs.failed[p] ? "   FAILED" : "")];
  if (!pairs.has[p]) { lines.push("no stream between these hosts"); return lines.join("\n"); }
  lines.push("throughput " + siRate(pairs.throughput[p]) +
    (pairs.best > 0 ? " (" + (100 * pairs.throughput[p] / pairs.best).toFixed(1) + " % of the best pair)" : ""));
  if (!isNaN(pairs.lossRatio[p])) lines.push("loss ratio " + sci(pairs.lossRatio[p]) + ", lost frames " + count(pairs.lost[p]));
  lines.push("bit errors " + count(pairs.bitErrors[p]) + (isNaN(pairs.berUpper[p]) ? "" : ", BER ≤ " + sci(pairs.berUpper[p])));
  if (pairs.retransmits[p] > 0) lines.push("retransmits " + count(pairs.retransmits[p]));
  if (pairs.completionErrors[p] > 0) lines.push("completion errors " + count(pairs.completionErrors[p]));
  if (!isNaN(pairs.latency[p])) lines.push("latency p99 " + ms(pairs.latency[p]));
  lines.push("click for the pair's flows");
  return lines.join("\n");
}

function streamsOfPair(test, from, to) {
  const s = test.streams, out = [];
  for (let i = 0; i < s.id.length; i++) if (s.sender[i] === from && s.receiver[i] === to) out.push(i);
  return out;
}

function showPair(view, from, to) {
  const { test, panel } = view;
  const indexes = streamsOfPair(test, from, to);
  const s = test.streams;
  panel.replaceChildren(el("h3", { text: test.hosts[from] + " → " + test.hosts[to] }));
  if (!indexes.length) { panel.append(el("p", { class: "hint", text: "No stream between these hosts." })); return; }
  panel.append(table(["agent", "stream", "flow", "throughput", "lost", "bit errors", "BER ≤", "failed checks"],
    indexes.map((i) => [test.hosts[s.agent[i]], s.id[i], s.flow[i] || "", siRate(s.throughput_bps[i]), count(s.lost_frames[i]),
      count(s.bit_errors[i]), sci(s.ber_upper[i]), joined(s.failed_checks[i], "; ")]),
    (row) => (s.passed[indexes[row]] ? "" : "failing")));
  const flows = ((test.localisation || {}).flows || []).filter((f) => f.sender === test.hosts[from] && f.receiver === test.hosts[to]);
  if (flows.length) {
    panel.append(el("h3", { text: "Traced paths" }));
    panel.append(table(["flow", "passed", "path", "faults"], flows.map((f) => [f.flow, f.passed ? "yes" : "no",
      joined(f.nodes, " → "), joined(f.faults, "; ")]), (row) => (flows[row].passed ? "" : "failing")));
  }
  view.chartStreams(indexes);
}

function matrixSection(section, test) {
  if (!test.hosts.length) return;
  const pairs = pairTable(test);
  if (!pairs.has.some((v) => v)) return;
  section.append(el("h3", { text: "Host × host" }));
  const select = el("select");
  for (const [key, metric] of Object.entries(METRICS)) select.append(el("option", { value: key, text: metric.label }));
  const canvas = el("canvas", { class: "matrix", "aria-label": "host by host matrix" });
  const panel = el("div", { class: "pair-panel" }, el("p", { class: "hint", text: "Hover a cell for the pair, click it for its streams and paths." }));
  const legend = el("div", { class: "legend" },
    el("span", {}, el("span", { class: "swatch", style: "background:" + rgb(FAIL_RGB) }), " failed"),
    el("span", {}, el("span", { class: "swatch", style: "background:rgb(26,152,80)" }), " good"),
    el("span", {}, el("span", { class: "swatch", style: "background:rgb(244,109,67)" }), " worst of the rest"),
    el("span", {}, el("span", { class: "swatch", style: "background:" + rgb(NO_DATA_RGB) }), " no stream"),
    el("span", { text: "rows send, columns receive" }));
  section.append(el("div", {}, "colour by ", select), legend, el("div", { class: "matrix-block" }, canvas, panel));
  const view = { section, test, pairs, canvas, panel, metric: select.value, chartStreams: () => {} };
  drawMatrix(view);
  select.addEventListener("change", () => { view.metric = select.value; drawMatrix(view); });
  const tooltip = document.getElementById("tooltip");
  canvas.addEventListener("mousemove", (e) => {
    const at = cellAt(view, e);
    if (!at) { tooltip.hidden = true; return; }
    tooltip.textContent = pairSummary(view, at.from, at.to);
    tooltip.style.left = e.clientX + 14 + "px";
    tooltip.style.top = e.clientY + 14 + "px";
    tooltip.hidden = false;
  });
  canvas.addEventListener("mouseleave", () => { tooltip.hidden = true; });
  canvas.addEventListener("click", (e) => { const at = cellAt(view, e); if (at) showPair(view, at.from, at.to); });
  return view;
}

// ---- time series ------------------------------------------------------------------------------
// Streams charted first: failing receivers, then other receivers, then senders, then a host's own
// (port, NIC) streams; at most eight.
function timesOf(test, i) { return test.streams.series[i].t || test.streams.t; }

function defaultChartStreams(test) {
  const s = test.streams, ranked = [];
  for (let i = 0; i < s.id.length; i++) {
    if (!timesOf(test, i).length) continue;
    const receives = s.receiver[i] >= 0 && s.agent[i] === s.receiver[i];
    const betweenHosts = s.sender[i] >= 0;
    ranked.push([(s.passed[i] ? 2 : 0) + (receives ? 0 : 1) + (betweenHosts ? 0 : 4), i]);
  }
  ranked.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  return ranked.slice(0, MAX_CHART_STREAMS).map((r) => r[1]);
}

function eventMarkers(events) {
  return {
    hooks: {
      draw: [(u) => {
        const ctx = u.ctx;
        ctx.save();
        for (const ev of events) {
          if (ev.t === null || ev.t === undefined) continue;
          const x = u.valToPos(ev.t, "x", true);
          if (x < u.bbox.left || x > u.bbox.left + u.bbox.width) continue;
          ctx.strokeStyle = ev.kind === "FAULT" || ev.kind === "LINK_DOWN" ? rgb(FAIL_RGB) : "#e08214";
          ctx.setLineDash([4, 3]);
          ctx.lineWidth = 1.5 * devicePixelRatio;
          ctx.beginPath(); ctx.moveTo(x, u.bbox.top); ctx.lineTo(x, u.bbox.top + u.bbox.height); ctx.stroke();
        }
        ctx.restore();
      }],
    },
  };
}

function chart(container, title, test, indexes, field, unit, events, format) {
  const s = test.streams;
  const times = new Set();
  for (const i of indexes) for (const t of timesOf(test, i)) times.add(t);
  const x = Array.from(times).sort((a, b) => a - b);
  if (!x.length) return false;
  const data = [x];
  const series = [{ label: "s" }];
  let any = false;
  indexes.forEach((i, k) => {
    const column = s.series[i][field];
    if (!column) return;
    const at = new Map(timesOf(test, i).map((t, j) => [t, column[j]]));
    const values = x.map((t) => (at.has(t) ? at.get(t) : null));
    if (values.some((v) => v !== null && v !== 0)) any = true;
    data.push(values);
    series.push({ label: test.hosts[s.agent[i]] + " " + s.id[i], stroke: SERIES_COLOURS[k % SERIES_COLOURS.length], width: 1.5,
      value: (u, v) => format(v) });
  });
  if (data.length < 2 || (!any && field !== "throughput_bps")) return false;
  const div = el("div", { class: "chart" });
  container.append(div);
  // uPlot sets its scales when it draws, after this returns: the axis is read then.
  const axisAt = chartAxisMinimums.push(null) - 1;
  const readAxis = (u) => {
    chartAxisMinimums[axisAt] = u.scales.y.min;
    document.documentElement.dataset.chartAxisMinimums = JSON.stringify(chartAxisMinimums);
  };
  new uPlot({
    title, width: Math.min(1200, document.body.clientWidth - 64), height: 240, series, data,
    // Rates and counts from zero: a zoomed axis makes a 2.5 % dip look like a collapse.
    scales: { x: { time: false }, y: { range: (u, min, max) => [0, max > 0 ? max * 1.05 : 1] } },
    axes: [{ label: "seconds into the test" },
      { label: unit, size: 80, values: (u, ticks) => ticks.map(field === "throughput_bps" ? siRate : (v) => String(+v.toPrecision(6))) }],
    plugins: [eventMarkers(events)],
    hooks: { draw: [readAxis] },
  }, data, div);
  return true;
}

function chartsSection(section, test) {
  const holder = el("div");
  const note = el("p", { class: "hint" });
  section.append(el("h3", { text: "Over time" }), note, holder);
  const draw = (indexes) => {
    holder.replaceChildren();
    note.textContent = indexes.length
      ? "Streams shown: " + indexes.length + " of " + test.streams.id.length +
        " (failing receivers first; click a matrix cell to chart that pair). Dashed lines: events below." +
        (test.samples_per_bin > 1 ? " A long run: each point is " + test.samples_per_bin +
          " samples (counts summed, throughput averaged, the slowest step kept)." : "")
      : "No per-interval samples in this test.";
    chart(holder, "Throughput", test, indexes, "throughput_bps", "bit/s", test.events, siRate);
    chart(holder, "Frames lost per interval", test, indexes, "lost", "frames", test.events, count);
    chart(holder, "Frames damaged per interval (errored, integrity, completion errors)", test, indexes, "damaged", "frames",
      test.events, count);
    chart(holder, "Retransmits per interval", test, indexes, "retransmits", "retransmits", test.events, count);
  };
  draw(defaultChartStreams(test));
  if (test.events.length) {
    const list = el("ul", { class: "events" });
    for (const ev of test.events.slice(0, 200)) {
      list.append(el("li", { text: (ev.t === null ? "?" : ev.t.toFixed(1) + " s") + "  " + ev.text }));
    }
    if (test.events.length > 200) list.append(el("li", { text: "… " + (test.events.length - 200) + " more in report.json" }));
    section.append(el("h3", { text: "Events" }), list);
  }
  return draw;
}

// ---- the rest of a test -----------------------------------------------------------------------
function berSection(section, test) {
  if (!test.ber.length) return;
  const s = test.streams;
  // Failing streams first, then the highest bounds: the rows worth reading on a large fabric.
  const rows = test.ber.slice().sort((a, b) => s.passed[a.stream] - s.passed[b.stream] ||
    (b.upper_bound ?? 0) - (a.upper_bound ?? 0) || a.stream - b.stream);
  const shown = rows.slice(0, MAX_TABLE_ROWS);
  section.append(el("h3", { text: "Bit error ratio" }));
  section.append(table(["agent", "stream", "bits compared", "bit errors", "measured", "upper bound", "confidence", "target",
    "to show the target"],
  shown.map((r) => [test.hosts[s.agent[r.stream]], s.id[r.stream], sci(r.bits_compared), count(r.bit_errors), sci(r.measured),
    sci(r.upper_bound), r.confidence === null ? "–" : (100 * r.confidence).toFixed(1) + " %", sci(r.target),
    r.errors_show ?? seconds(r.seconds_more_for_target, " more")]),
  (row) => (s.passed[shown[row].stream] ? "" : "failing")));
  if (rows.length > shown.length) {
    section.append(el("p", { class: "hint", text: "… " + (rows.length - shown.length) +
      " more streams in report.json; click a matrix cell for a pair's." }));
  }
}

// A rank is an agent, or on rails one of its NICs ("vm2 mlx5_1/1", as slowest_rank names it).
function rankName(rank) {
  return rank.nic ? rank.agent + " " + rank.nic : rank.agent;
}

function collectiveSection(section, test) {
  const c = test.collective;
  if (!c) return;
  section.append(el("h3", { text: "Training step replay: " + c.name }));
  section.append(el("p", {}, c.ranks + " ranks" + (c.rails ? " on each of " + c.rails + " rails" : "") + ", " + c.steps +
    " steps, " + (c.time_per_step_s * 1e3).toFixed(3) +
    " ms per step; algbw " + siRate(8 * c.algbw_bytes_per_s) + ", busbw " + siRate(8 * c.busbw_bytes_per_s) +
    "; slowest rank " + c.slowest_rank));
  const ranks = c.per_rank || [];
  section.append(table(["rank", "steps done", "step time mean", "step time max", "bytes per step", "model bytes per step"],
    ranks.map((r) => [rankName(r), r.steps_done, (r.step_time_mean_s * 1e3).toFixed(3) + " ms",
      (r.step_time_max_s * 1e3).toFixed(3) + " ms", count(r.bytes_per_step), count(r.model_bytes_per_step)]),
    (row) => (rankName(ranks[row]) === c.slowest_rank ? "straggler" : "")));
  // The step timeline: per rank, its slowest flow's time per step in each interval.
  const s = test.streams, byRank = new Map();
  for (let i = 0; i < s.id.length; i++) {
    if (!s.series[i].step_time_ns) continue;
    const rank = test.hosts[s.agent[i]];
    if (!byRank.has(rank)) byRank.set(rank, []);
    byRank.get(rank).push(i);
  }
  if (!byRank.size) return;
  const times = new Set();
  for (const list of byRank.values()) for (const i of list) for (const t of timesOf(test, i)) times.add(t);
  const x = Array.from(times).sort((a, b) => a - b);
  const data = [x], series = [{ label: "s" }];
  let k = 0;
  for (const [rank, list] of byRank) {
    const values = x.map((t) => {
      let worst = null;
      for (const i of list) {
        const j = timesOf(test, i).indexOf(t);
        const v = j >= 0 ? s.series[i].step_time_ns[j] : null;
        if (v !== null && (worst === null || v > worst)) worst = v;
      }
      return worst === null ? null : worst / 1e6;
    });
    const straggler = rank === c.slowest_rank;
    series.push({ label: rank + (straggler ? " (slowest)" : ""), stroke: straggler ? rgb(FAIL_RGB) : SERIES_COLOURS[k++ % 8],
      width: straggler ? 3 : 1.5 });
    data.push(values);
  }
  const div = el("div", { class: "chart" });
  section.append(div);
  new uPlot({ title: "Time per step, per rank", width: Math.min(1200, document.body.clientWidth - 64), height: 240, series,
    scales: { x: { time: false } }, axes: [{ label: "seconds into the test" }, { label: "ms per step", size: 70 }],
    plugins: [eventMarkers(test.events)] }, data, div);
}

// A qualification method: a row per step, a row per frame size for a throughput search, and the
// curve of loss (and, for a search, NDR) against what was offered.
// The fabric methods' own results: uplinks per leaf, a failed link's flows, trains a port held.
function fabricMethodTables(section, m) {
  const ms = (v) => (typeof v === "number" ? v.toFixed(0) + " ms" : "–");
  if (m.ecmp_balance) {
    const rows = [];
    for (const leaf of m.ecmp_balance.leaves || []) {
      (leaf.uplinks || []).forEach((u, i) => rows.push([i ? "" : leaf.leaf, u.link, count(u.flows), count(u.bytes),
        i ? "" : leaf.max_over_mean.toFixed(3), i ? "" : leaf.fairness.toFixed(3),
        i ? "" : (leaf.passed ? "pass" : "FAIL: " + leaf.verdict)]));
    }
    section.append(table(["leaf", "uplink", "flows", "bytes", "max/mean", "Jain's index", "verdict"], rows,
      (row) => (rows[row][6].startsWith("FAIL") ? "failing" : "")));
  }
  if (m.link_failure) {
    const f = m.link_failure;
    section.append(el("p", { class: "facts", text: f.link + " down at +" + (typeof f.ran_at_s === "number" ?
      f.ran_at_s.toFixed(3) + " s" : "– (not run)") + "; " + f.flows_crossed + " flows crossed it, " +
      f.flows_crossed_and_lost + " of them lost traffic; " + f.flows_lost_without_crossing +
      " lost without crossing it; convergence " + ms(f.convergence_ms.min) + " / " + ms(f.convergence_ms.median) +
      " / " + ms(f.convergence_ms.max) + " (min / median / max)" }));
    const hit = (f.flows || []).filter((x) => x.crossed || x.lost_frames > 0);
    section.append(table(["sender", "receiver", "flow", "crossed", "lost", "resumed after"],
      hit.map((x) => [x.sender, x.receiver, x.flow, x.crossed ? "yes" : "no", count(x.lost_frames),
        x.resumed ? ms(x.resume_ms) : "never"]),
      (row) => (!hit[row].crossed || !hit[row].resumed ? "failing" : "")));
  }
  if (m.burst_absorption) {
    const b = m.burst_absorption;
    section.append(table(["train (frames per sender)", "senders", "received", "lost"],
      (b.steps || []).map((st) => [count(st.burst_frames), b.senders, count(st.rx_frames), count(st.lost_frames)]),
      (row) => (b.steps[row].lost_frames > 0 ? "failing" : "")));
    section.append(el("p", { class: "facts", text: "longest train absorbed: " +
      (b.largest_absorbed ? b.largest_absorbed + " frames from each of " + b.senders + " senders" : "none") }));
  }
}

function methodSection(section, test) {
  const m = test.method;
  if (!m) return;
  const latency = (ns) => (ns === null || ns === undefined ? "–" : (ns / 1e3).toFixed(1) + " µs");
  section.append(el("h3", { text: "Method: " + m.kind + (m.complete ? "" : " (stopped early)") }));
  if (m.kind === "throughput" && (m.throughput || []).length) {
    section.append(table(["frame size", "NDR", "NDR frames/s", "PDR (loss ≤ " + (100 * m.pdr_loss).toPrecision(3) + " %)",
      "trials", "latency p50 / p99 at NDR", "resolved"],
    m.throughput.map((t) => [t.frame_size + " B", siRate(t.ndr_bps), count(Math.round(t.ndr_pps)) + "/s",
      siRate(t.pdr_bps), t.trials, latency(t.latency_p50_ns) + " / " + latency(t.latency_p99_ns),
      (t.resolved ? "yes" : "no") + (t.receiver_limited ? " (receiver dropped frames)" : "") +
      (t.sender_short ? " (a trial sent less than offered)" : "")])));
  }
  if (m.congestion) {
    const c = m.congestion;
    section.append(table(["port", "agent", "received", "lost", "loss"], [
      ["congested", c.congested_agent, count(c.congested_rx_frames), count(c.congested_lost_frames),
        (100 * c.congested_loss_ratio).toPrecision(3) + " %"],
      ["uncongested", c.uncongested_agent, count(c.uncongested_rx_frames), count(c.uncongested_lost_frames),
        (100 * c.uncongested_loss_ratio).toPrecision(3) + " %" + (c.head_of_line_blocking ? " — head-of-line blocking" : "")],
    ], (row) => (row === 1 && c.head_of_line_blocking ? "failing" : "")));
  }
  fabricMethodTables(section, m);
  const steps = m.steps || [];
  section.append(table(["step", "offered", "sent", "received", "lost", "loss", "CE marked", "latency p99", "verdict"],
    steps.map((st) => [st.label, st.offered_bps > 0 ? siRate(st.offered_bps) : "–", count(st.tx_frames), count(st.rx_frames),
      count(st.lost_frames), (100 * st.loss_ratio).toPrecision(3) + " %" + (st.host_drops > 0 ? " (host drops)" : ""),
      count(st.ce_marked), latency(st.latency_p99_ns),
      st.verdict + (st.not_covered && st.not_covered.length ? " (" + st.not_covered.length + " of " + st.pairs +
        " pairs not covered)" : "")]),
    (row) => (steps[row].verdict === "pass" ? "" : "failing")));
  // The curve: loss per step, in step order (a search's trials in the order it ran them).
  if (!steps.length) return;
  const x = steps.map((_, i) => i + 1);
  const div = el("div", { class: "chart" });
  section.append(div);
  new uPlot({ title: m.kind === "incast" ? "Loss per fan-in step" : "Loss per step", width: Math.min(1200,
    document.body.clientWidth - 64), height: 220,
  series: [{ label: "step" }, { label: "loss %", stroke: rgb(FAIL_RGB), width: 2 },
    { label: "received Mbit/s", stroke: SERIES_COLOURS[0], width: 1.5, scale: "rate" }],
  scales: { x: { time: false }, rate: {} },
  axes: [{ label: "step", values: (u, ticks) => ticks.map((t) => (steps[t - 1] ? steps[t - 1].label : "")) },
    { label: "loss %", size: 60 }, { scale: "rate", side: 1, label: "Mbit/s", size: 60 }] },
  [x, steps.map((st) => 100 * st.loss_ratio), steps.map((st) => st.rx_bps / 1e6)], div);
}

function startsSection(section, test) {
  section.append(el("h3", { text: "Start" }), el("p", { class: "facts",
    text: "planned " + (test.planned_start || "–") + ", start skew " + ms(test.start_skew_ns) }));
  section.append(table(["agent", "clock offset", "clock rtt", "start error", "samples", "stop reason"],
    (test.starts || []).map((st) => {
      const r = (test.agent_results || []).find((a) => a.agent === st.agent) || {};
      return [st.agent, ms(st.clock_offset_ns), ms(st.clock_rtt_ns), ms(st.start_error_ns),
        (r.samples_received ?? "–") + " / " + (r.samples_made ?? "–"), r.stop_reason || ""];
    })));
}

// One part that cannot be drawn (a report from another version, a field of an unexpected shape)
// says so in place and leaves the rest of the page standing; the error is still recorded.
function guarded(section, part, draw) {
  try {
    return draw();
  } catch (e) {
    recordError(part + ": " + (e && e.stack ? e.stack : e));
    section.append(el("p", { class: "problems", text: "The " + part + " could not be drawn: " + e }));
    return undefined;
  }
}

function testSection(test) {
  const section = el("section", { id: "test-" + test.index, class: "test" });
  section.dataset.test = test.name;
  section.append(el("h2", {}, test.name, badge(test.verdict)));
  section.append(el("p", { class: "facts", text: test.engine + ", " + test.topology + ", " + test.duration_s + " s, " +
    test.hosts.length + " hosts, " + test.streams.id.length + " streams" }));
  // A night's schedule may find a path fault in every step: the first 20 here, all in report.json.
  const pathFaults = test.path_faults || [];
  const problems = (test.problems || []).concat(pathFaults.slice(0, 20));
  if (pathFaults.length > 20) problems.push("… " + (pathFaults.length - 20) + " more path faults (report.json: tests[].path_faults)");
  if (problems.length) section.append(el("ul", { class: "problems" }, ...problems.map((p) => el("li", { text: p }))));
  const failedStreams = [];
  for (let i = 0; i < test.streams.id.length; i++) if (!test.streams.passed[i]) failedStreams.push(i);
  if (failedStreams.length) {
    section.append(el("ul", { class: "problems" }, ...failedStreams.slice(0, 20).map((i) => el("li", {
      text: test.hosts[test.streams.agent[i]] + " " + test.streams.id[i] + ": " + joined(test.streams.failed_checks[i], "; "),
    })), failedStreams.length > 20 ? el("li", { text: "… " + (failedStreams.length - 20) + " more failing streams" }) : null));
  }
  if ((test.warnings || []).length) {
    section.append(el("ul", { class: "warnings" }, ...test.warnings.slice(0, 50).map((w) => el("li", { text: w }))));
  }
  guarded(section, "evidence per link", () => linkEvidenceSection(section, test));
  guarded(section, "suspect links", () => localisationSection(section, test));
  guarded(section, "link coverage", () => coverageSection(section, test));
  guarded(section, "switch counters", () => switchCountersSection(section, test));
  guarded(section, "optics", () => opticsSection(section, test));
  const view = guarded(section, "matrix", () => matrixSection(section, test));
  const draw = guarded(section, "charts", () => chartsSection(section, test));
  if (view && draw) view.chartStreams = draw;
  guarded(section, "BER table", () => berSection(section, test));
  guarded(section, "training replay", () => collectiveSection(section, test));
  guarded(section, "method", () => methodSection(section, test));
  guarded(section, "start", () => startsSection(section, test));
  return section;
}

function runSection(model) {
  const run = model.run;
  const verdict = run.status || (run.exit_code === 0 ? "pass" : "fail");
  const header = el("header", {},
    el("h1", {}, "Tusk run " + run.run_id, badge(verdict)),
    el("p", { class: "conclusion", text: run.conclusion || "" }),
    el("p", { class: "facts", text: "profile " + ((run.profile || {}).name || "?") + " (" + ((run.profile || {}).file || "") +
      "), " + (run.started || "") + " – " + (run.finished || "") + ", exit code " + run.exit_code + ", tusk " + run.tusk_version }));
  if ((run.missing_agents || []).length) {
    header.append(el("ul", { class: "problems" }, el("li", { text: "agents missing: " + run.missing_agents.join(", ") })));
  }
  const cabling = run.cabling;
  if (cabling) {
    header.append(el("p", { class: cabling.clean && cabling.checked !== false ? "facts" : "problems", text: cabling.text }));
    if ((cabling.findings || []).length) {
      header.append(el("ul", { class: "problems" }, ...cabling.findings.map((f) => el("li", { text: f.text }))));
    }
  }
  const baseline = run.baseline;
  if (baseline) {
    const worse = baseline.regressions || [];
    header.append(el("p", { class: baseline.compared && !worse.length ? "facts" : "problems", text: baseline.headline }));
    if (worse.length) header.append(el("ul", { class: "problems" }, ...worse.map((line) => el("li", { text: line }))));
  }
  const nav = el("nav", { class: "tests" });
  for (const test of model.tests) {
    nav.append(el("a", { href: "#test-" + test.index }, test.name, badge(test.verdict)));
  }
  header.append(nav);
  return header;
}

function factsSection(model) {
  const section = el("section", { class: "facts-block" }, el("h2", { text: "Run facts" }));
  const offsets = new Map();
  for (const test of model.tests) for (const st of test.starts || []) if (!offsets.has(st.agent)) offsets.set(st.agent, st.clock_offset_ns);
  section.append(el("h3", { text: "Agents" }), table(["agent", "host", "version", "address", "connected at end",
    "connections", "clock offset", "duplicates dropped", "records missing", "notes"],
  model.agents.map((a) => [a.name, a.hostname, a.version, a.remote, a.connected_at_end ? "yes" : "no", a.connections,
    ms(offsets.get(a.name)), a.duplicate_records_dropped, a.records_missing, joined(a.notes, "; ")]),
  (row) => (model.agents[row].connected_at_end ? "" : "failing")));
  if (model.faults.length) {
    section.append(el("h3", { text: "Faults" }), table(["time", "agent", "test", "message"],
      model.faults.map((f) => [f.time, f.agent, f.test_index, f.message])));
  }
  const profile = model.run.profile || {};
  section.append(el("h3", { text: "Profile as run" }), el("p", { class: "facts", text: profile.description || "" }));
  if (profile.source) section.append(el("details", {}, el("summary", { text: profile.file || "profile" }),
    el("pre", { class: "profile", text: profile.source })));
  return section;
}

function render() {
  const model = JSON.parse(document.getElementById("report-data").textContent);
  const main = document.getElementById("report");
  document.title = "Tusk " + model.run.run_id;
  main.append(runSection(model));
  for (const test of model.tests) main.append(testSection(test));
  main.append(factsSection(model));
  // Since navigation started: parsing the page and its data included.
  document.documentElement.dataset.renderMs = performance.now().toFixed(1);
  document.documentElement.dataset.rendered = "yes";
}

try {
  render();
} catch (e) {
  recordError("render failed: " + (e && e.stack ? e.stack : e));
  document.getElementById("report").append(el("pre", { class: "problems", text: "This report could not be drawn: " + e }));
}
