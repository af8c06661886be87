// netsight dashboard: the findings panel (window.NetsightFindings). Every finding of what is
// drawn (/api/findings/overview), worst first, filtered by text, severity and namespace; a
// click focuses its object in the graph, so nobody has to click red nodes one by one.
"use strict";

(() => {
  const { el, clear } = window.NetsightDom;
  const SEVERITIES = ["critical", "warning", "info"];
  const ROWS = 300; // rows drawn per severity: thousands of rows would slow the page, not help

  function objectOf(finding) {
    return finding.object || null;
  }

  function namespaceOf(finding) {
    const r = finding.resource;
    return r && r.namespace ? r.namespace : "";
  }

  function matches(finding, filter) {
    if (filter.severity && finding.severity !== filter.severity) return false;
    if (filter.namespace && namespaceOf(finding) !== filter.namespace) return false;
    if (!filter.text) return true;
    const text = filter.text.toLowerCase();
    return [finding.code, finding.summary, finding.category, objectOf(finding)]
      .some((v) => v && String(v).toLowerCase().includes(text));
  }

  // A panel over `box`: render(findings) after each load; onFocus(key) when one is clicked.
  function panel(box, onFocus) {
    const filter = { text: "", severity: "", namespace: "" };
    let findings = [];
    let complete = true;
    let unlisted = null; // why nothing is listed, when nothing was asked for

    const text = el("input", { id: "findings-text", type: "search", placeholder: "code, text or object",
      autocomplete: "off", "aria-label": "filter findings by text" });
    const severity = el("select", { id: "findings-severity", "aria-label": "filter findings by severity" },
      el("option", { value: "" }, "All severities"),
      SEVERITIES.map((s) => el("option", { value: s }, s)));
    const namespace = el("select", { id: "findings-namespace", "aria-label": "filter findings by namespace" });
    const counts = el("div", { id: "findings-counts", className: "counts" });
    const list = el("div", { id: "findings-list", className: "findings-list" });
    clear(box).append(el("h2", { text: "Findings" }), counts,
      el("div", { className: "row filters" }, text, severity, namespace), list);

    text.addEventListener("input", () => { filter.text = text.value.trim(); draw(); });
    severity.addEventListener("change", () => { filter.severity = severity.value; draw(); });
    namespace.addEventListener("change", () => { filter.namespace = namespace.value; draw(); });

    function item(finding) {
      const key = objectOf(finding);
      const row = el("li", { className: `finding-row sev-${finding.severity}`, "data-object": key || "",
        "data-code": finding.code, "data-severity": finding.severity, tabindex: key ? 0 : null,
        title: key ? `Show ${key} in the graph` : null },
        el("div", {}, el("span", { className: `badge ${finding.severity}`, text: finding.severity }), " ",
          el("code", { text: finding.code }), " ",
          key ? el("span", { className: "object", text: key }) : el("span", { className: "muted", text: "(cluster)" })),
        el("div", { className: "summary", text: finding.summary }));
      if (key) {
        row.addEventListener("click", () => onFocus(key));
        row.addEventListener("keydown", (event) => { if (event.key === "Enter") onFocus(key); });
      }
      return row;
    }

    function draw() {
      const shown = findings.filter((f) => matches(f, filter));
      clear(counts);
      for (const s of SEVERITIES) {
        const n = findings.filter((f) => f.severity === s).length;
        if (n) counts.append(el("span", { className: `badge ${s}`, "data-severity": s, text: `${n} ${s}` }), " ");
      }
      if (unlisted) counts.append(el("span", { className: "muted", text: unlisted }));
      else if (!findings.length) counts.append(el("span", { className: "ok", text: "No findings in what is drawn." }));
      clear(list);
      for (const s of SEVERITIES) {
        const group = shown.filter((f) => f.severity === s);
        if (!group.length) continue;
        list.append(el("h3", { className: `group sev-${s}`, "data-severity": s, text: `${s} (${group.length})` }),
          el("ul", { className: "finding-rows" }, group.slice(0, ROWS).map(item)));
        if (group.length > ROWS) {
          list.append(el("p", { className: "muted small", text: `${group.length - ROWS} more ${s} ` +
            "finding(s): filter to narrow the list." }));
        }
      }
      if (findings.length && !shown.length) list.append(el("p", { className: "muted", text: "No finding matches the filter." }));
      if (!complete) list.append(el("p", { className: "muted small", text: "More findings than listed: pick a namespace." }));
    }

    function render(overview, why) {
      unlisted = why || null;
      findings = overview.findings || [];
      complete = overview.complete !== false;
      const namespaces = [...new Set(findings.map(namespaceOf).filter(Boolean))].sort();
      if (filter.namespace && !namespaces.includes(filter.namespace)) filter.namespace = "";
      clear(namespace).append(el("option", { value: "" }, "All namespaces"),
        ...namespaces.map((ns) => el("option", { value: ns }, ns)));
      namespace.value = filter.namespace;
      draw();
    }

    return { render, filter };
  }

  window.NetsightFindings = { panel };
})();
