// report.html's evidence about links and ports, beside the flows' own: the suspect links that
// localisation names, the topology's link coverage, what the switches counted (SNMP) and what each
// host port's optics and FEC said (ethtool). Loaded before report.js, whose helpers (el, table,
// joined, sci) these call once the page renders.
"use strict";

function localisationSection(section, test) {
  const loc = test.localisation;
  if (!loc) return;
  section.append(el("h3", { text: "Suspect links" }), el("p", { text: loc.conclusion || "" }));
  if ((loc.suspects || []).length) {
    // What the link does to what crosses it, with its 95 % interval; a report from before rates
    // were fitted (issue 36) has its votes instead.
    const percent = (v) => (100 * v).toPrecision(3) + " %";
    const fault = (x) => {
      if (!x.kind) return typeof x.votes === "number" ? "votes " + x.votes.toFixed(2) : "";
      if (typeof x.rate !== "number") return x.kind;
      const interval = Array.isArray(x.rate_interval) && x.rate_interval.length === 2
        ? " (" + percent(x.rate_interval[0]) + " to " + percent(x.rate_interval[1]) + ")" : "";
      return x.kind + " " + percent(x.rate) + interval;
    };
    section.append(table(["link", "confidence", "fault", "failing / passing flows", "evidence", "next steps"],
      loc.suspects.map((x) => [el("span", { class: "suspect", text: x.name || x.link }), x.confidence, fault(x),
        (x.failing_flows || []).length + " / " + ((x.passing_flows || []).length + (x.passing_flows_summed || 0)),
        joined(x.evidence, "; "), el("span", { class: "next-steps", text: joined(x.next_steps, " ") })])));
  }
  if ((loc.hosts || []).length) {
    section.append(table(["host", "problem", "evidence", "next steps"],
      loc.hosts.map((h) => [h.agent, h.problem, joined(h.evidence, "; "), joined(h.next_steps, " ")])));
  }
}

// Which links of the topology file the test's flows crossed, and the directions none did.
function coverageSection(section, test) {
  const cov = test.coverage;
  if (!cov) return;
  section.append(el("h3", { text: "Link coverage" }), el("p", { class: "facts", text:
    (100 * cov.share).toPrecision(4) + " % of " + cov.directions + " link directions crossed (" +
    cov.exercised_both_ways + " of " + cov.links + " links both ways); flows per direction min " +
    cov.flows_per_direction.min + ", median " + cov.flows_per_direction.median }));
  if ((cov.never_exercised || []).length) {
    section.append(el("p", { class: "problems", text: "Never crossed:" }),
      el("ul", { class: "uncovered" }, ...cov.never_exercised.map((n) => el("li", { text: n }))));
  }
}

// What the switches at each cable's ends counted over the test (SNMP, IF-MIB), per direction.
function switchCountersSection(section, test) {
  const counted = test.switch_counters;
  if (!counted) return;
  section.append(el("h3", { text: "Switch counters" }), el("p", { class: "facts", text: counted.text }));
  const rows = [];
  const lossy = [];
  for (const link of counted.links || []) {
    for (const d of [link.a_to_b, link.b_to_a]) {
      if (!d.sender_read && !d.receiver_read) continue;
      lossy.push(d.counts_loss);
      rows.push([d.link + (link.cable ? ", cable " + link.cable : ""), d.sent ?? "–", d.received ?? "–",
        d.in_errors, d.in_discards, d.vanished, d.out_errors + d.out_discards, d.lost]);
    }
  }
  section.append(table(["direction", "sent", "received", "in errors", "in discards", "never counted in",
    "dropped by the sender", "lost"], rows, (row) => (lossy[row] ? "failing" : "")));
  const unread = (counted.unreadable || []).concat(counted.warnings || []);
  if (unread.length) section.append(el("ul", { class: "warnings" }, ...unread.map((u) => el("li", { text: u }))));
  // When the loss was counted: each interval of the test that counted some (--snmp-interval).
  const intervals = test.switch_intervals;
  if (!intervals) return;
  section.append(el("p", { class: "facts", text: intervals.text }));
  const noted = intervals.noted || [];
  document.documentElement.dataset.lossyIntervals = String(noted.filter((n) => n.lossy.length).length);
  if (noted.length) {
    section.append(table(["from", "to", "directions that counted loss", "switches unreadable"],
      noted.map((n) => [n.from, n.to, n.lossy.map((d) => d.link + ": " + d.counts).join("; ") +
        (n.lossy_dropped ? "; … " + n.lossy_dropped + " more" : ""), n.switches_unreadable]),
      (row) => (noted[row].lossy.length ? "failing" : "")));
  }
}

// Each host port's transceiver module and FEC counters over the test (read by its agent with
// ethtool as the test started and ended), and what they were found to be against the profile's
// optics thresholds and the module's own.
function opticsSection(section, test) {
  const optics = test.optics;
  if (!optics) return;
  const ports = optics.ports || [];
  const root = document.documentElement.dataset;
  root.opticsPorts = String(Number(root.opticsPorts || 0) + ports.length);
  root.opticsFailing = String(Number(root.opticsFailing || 0) + ports.filter((p) => p.failed).length);
  section.append(el("h3", { text: "Optics and FEC" }), el("p", { class: "facts", text: optics.text }));
  const number = (v, digits) => (typeof v === "number" ? v.toFixed(digits) : "–");
  const perLane = (m, field) => (m && (m.lanes || []).length ? m.lanes.map((l) => number(l[field], 2)).join(" / ") : "–");
  const moduleText = (m) => {
    if (!m) return "not read";
    if (m.status !== "diagnostics") return m.status.replace("_", " ") + (m.note ? ": " + m.note : "");
    return [m.type, m.vendor, m.part_number, m.serial_number ? "SN " + m.serial_number : null].filter(Boolean).join(" ");
  };
  const fecText = (f) => {
    if (!f) return "not read";
    if (f.status !== "statistics") return f.status.replace("_", " ") + (f.note ? ": " + f.note : "");
    return (f.active || "?") + ", " + count(f.corrected_blocks.total) + " corrected, " +
      count(f.uncorrectable_blocks.total) + " uncorrectable codewords";
  };
  const rate = (r) => (r ? (r.lower_bound ? "≥ " : "") + sci(r.rate) : "–");
  section.append(table(["port", "module", "temperature °C", "RX power per lane, dBm", "TX power per lane, dBm",
    "FEC (at the end)", "pre-FEC BER", "post-FEC symbol BER", "note"],
  ports.map((p) => [p.title, moduleText(p.module), number(p.module && p.module.temperature_c, 1),
    perLane(p.module, "rx_power_dbm"), perLane(p.module, "tx_power_dbm"), fecText(p.fec),
    rate(p.error_rates.pre_fec_ber), rate(p.error_rates.post_fec_symbol_ber), p.note || ""]),
  (row) => (ports[row].failed ? "failing" : "")));
  const findings = [];
  for (const p of ports) for (const f of p.findings || []) findings.push([p, f]);
  if (findings.length) {
    section.append(table(["port", "lane", "measure", "measured", "limit", "limit from", "finding and next step"],
      findings.map(([p, f]) => [p.title, f.lane ?? "", f.measure, typeof f.measured === "number" ? f.measured.toPrecision(4) : "–",
        typeof f.limit === "number" ? f.limit.toPrecision(4) : "–", f.limit_source.replace("_", " "),
        el("span", { class: "next-steps", text: f.text })]),
      (row) => (findings[row][1].severity === "failure" ? "failing" : "")));
  }
  opticsTimelineTable(section, optics);
}

// The ports read every interval of the test (profile optics: interval): in how many each erred,
// and when the first warning and the first failure began.
function opticsTimelineTable(section, optics) {
  const timeline = optics.timeline || [];
  if (!timeline.length) return;
  const root = document.documentElement.dataset;
  root.opticsTimelinePorts = String(Number(root.opticsTimelinePorts || 0) + timeline.length);
  section.append(el("p", { class: "facts", text: optics.timeline_text || "" }));
  section.append(table(["port", "intervals read", "with findings", "failing", "first warning or failure from",
    "first failure from", "worst finding and next step"],
  timeline.map((t) => [t.title, count(t.intervals), count(t.with_findings), count(t.failing), t.first_start || "–",
    t.failing_start || "–", el("span", { class: "next-steps", text: t.worst_finding || "" })]),
  (row) => (timeline[row].failing ? "failing" : "")));
}

// One row per link that anything points at: what the flows, the probes, the switches' counters and
// the host ports' optics say of it, side by side, and the one thing to do first (report.json
// tests[].link_evidence, joined by the controller).
function linkEvidenceSection(section, test) {
  const rows = test.link_evidence || [];
  if (!rows.length) return;
  document.documentElement.dataset.linkEvidenceRows = String(Number(document.documentElement.dataset.linkEvidenceRows || 0) + rows.length);
  section.append(el("h3", { text: "Evidence per link" }));
  section.append(table(["link", "flows", "probes", "switch counters", "optics", "do first"],
    rows.map((r) => [el("span", { class: "suspect", text: r.link }), r.flows || "–", r.probes || "–",
      r.switch_counters || "–", r.optics || "–", el("span", { class: "next-steps", text: r.next_step || "" })]),
    (row) => (rows[row].failing ? "failing" : "")));
}
