// netsight dashboard: the side panels (window.NetsightPanels): an object with its findings
// (/api/findings) and find_blocking_policies' verdict between two endpoints (/api/verdict).
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const { el, clear, richText, api, errorText } = window.NetsightDom;
  // Kinds find_blocking_policies takes as endpoints ("Kind/ns/name"; a pod as "ns/name").
  const ENDPOINT_KINDS = new Set(["Pod", "Service", "Deployment", "StatefulSet", "DaemonSet"]);

  // `state` is the page's (dashboard.js); `setAround(key)` draws a neighbourhood;
  // `marked()` is told when the source or destination changes (their labels show first).
  function create(state, setAround, marked) {
    function endpointArg(node) {
      const kind = node.data("kind");
      const ns = node.data("namespace");
      return kind === "Pod" ? `${ns}/${node.data("name")}` : `${kind}/${ns}/${node.data("name")}`;
    }

    function showDeleted(id) {
      const box = clear($("details"));
      box.append(el("h2", { text: "Object" }), el("p", { className: "key", text: id }),
        el("p", { className: "error", text: "Deleted from the cluster." }));
    }

    function field(name, value) {
      return [el("dt", { text: name }), el("dd", { text: value === null || value === undefined ? "—" : value })];
    }

    function findingItem(finding) {
      const resource = finding.resource
        ? [finding.resource.kind, finding.resource.namespace, finding.resource.name].filter(Boolean).join("/")
        : null;
      return el("li", { className: `finding sev-${finding.severity}` },
        el("div", {},
          el("span", { className: `badge ${finding.severity}`, text: finding.severity }), " ",
          el("code", { text: finding.code }), " ",
          el("span", { className: "muted small", text: finding.category })),
        el("div", { className: "summary", text: finding.summary }),
        resource ? el("div", { className: "muted small", text: resource }) : null,
        finding.detail ? richText(finding.detail, "small") : null,
        finding.suggestion ? richText(finding.suggestion, "suggestion small", "Fix:") : null);
    }

    function serviceBlock(service) {
      const pods = service.pods || {};
      const endpoints = service.endpoints || {};
      return el("dl", { className: "facts" },
        ...field("status", service.status),
        ...field("type", service.type + (service.headless ? " (headless)" : "")),
        ...field("selector", service.selector),
        ...field("ports", (service.ports || []).join(", ") || "none"),
        ...field("pods", `${pods.selected} selected, ${pods.ready} ready, ${pods.not_ready ?? pods.notReady} not ready`),
        ...field("endpoints", `${endpoints.ready} ready, ${endpoints.notReady ?? endpoints.not_ready} not ready (${endpoints.source})`),
        ...field("workloads", (service.workloads || []).join(", ") || "none"),
        ...((service.notEvaluated || []).length ? field("not evaluated", service.notEvaluated.join("; ")) : []));
    }

    async function showDetails(id) {
      const token = ++state.detailsToken;
      const node = state.cy.getElementById(id);
      const kind = node.length ? node.data("kind") : id.split("/")[0];
      const box = clear($("details"));
      box.append(el("h2", { text: "Object" }));
      box.append(el("dl", { className: "facts" },
        ...field("kind", kind),
        ...field("namespace", node.length ? node.data("namespace") : null),
        ...field("name", node.length ? node.data("name") : id)));
      const actions = el("div", { className: "row" });
      if (node.length && ENDPOINT_KINDS.has(kind)) {
        actions.append(
          el("button", { type: "button", id: "set-source", onclick: () => setEndpoint("source", id) }, "Set as source"),
          el("button", { type: "button", id: "set-destination", onclick: () => setEndpoint("destination", id) }, "Set as destination"));
      }
      if (state.around !== id) {
        actions.append(el("button", { type: "button", id: "show-around", title: "Draw only this object and its neighbours",
          onclick: () => setAround(id) }, "Neighbourhood"));
      }
      box.append(actions);
      const findings = el("div", { id: "findings" }, el("p", { className: "muted", text: "Loading findings…" }));
      box.append(findings);
      let answer;
      try {
        answer = await api(`api/findings?object=${encodeURIComponent(id)}`);
      } catch (error) {
        if (token !== state.detailsToken) return;
        clear(findings).append(el("p", { className: "error", text: errorText(error) }));
        return;
      }
      if (token !== state.detailsToken) return;
      clear(findings);
      if (answer.service) {
        findings.append(el("h3", { text: "diagnose_service" }), serviceBlock(answer.service));
      }
      const list = answer.findings || [];
      findings.append(el("h3", { text: list.length ? `Findings (${list.length})` : "Findings" }));
      if (!list.length) {
        findings.append(el("p", { className: "ok", text: "No findings: nothing misconfigured netsight knows of." }));
      } else {
        findings.append(el("ul", { className: "findings" }, list.map(findingItem)));
      }
    }

    // --- the verdict between two endpoints ------------------------------------------------------

    function setEndpoint(which, id) {
      const node = state.cy.getElementById(id);
      if (!node.length) return;
      state[which] = { id, arg: endpointArg(node), label: `${node.data("kind")} ${node.data("namespace")}/${node.data("name")}` };
      markEndpoints();
      runVerdict();
    }

    function markEndpoints() {
      const cy = state.cy;
      cy.nodes().removeClass("src dst");
      for (const [which, cls, target] of [["source", "src", "src"], ["destination", "dst", "dst"]]) {
        const chosen = state[which];
        const label = $(target);
        if (chosen) {
          label.textContent = chosen.label;
          label.className = "";
          cy.getElementById(chosen.id).addClass(cls);
        }
      }
      $("check").disabled = !(state.source && state.destination);
      marked();
    }

    async function runVerdict() {
      if (!(state.source && state.destination)) return;
      const port = Number($("port").value);
      const out = clear($("verdict"));
      state.cy.nodes().removeClass("blocking");
      if (!Number.isInteger(port) || port < 1 || port > 65535) {
        out.append(el("p", { className: "error", text: "Port: a number from 1 to 65535." }));
        return;
      }
      const token = ++state.verdictToken;
      out.append(el("p", { className: "muted", text: "Evaluating…" }));
      let answer;
      try {
        answer = await api("api/verdict", {
          method: "POST",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify({ source: state.source.arg, destination: state.destination.arg,
            port, protocol: $("protocol").value }),
        });
      } catch (error) {
        if (token !== state.verdictToken) return;
        clear(out).append(el("p", { className: "error", text: errorText(error) }));
        return;
      }
      if (token !== state.verdictToken) return;
      clear(out);
      const verdict = answer.allowed === true ? "allowed" : answer.allowed === false ? "denied" : "undecided";
      out.append(el("div", { id: "verdict-result", className: `verdict ${verdict}`, "data-allowed": String(answer.allowed) },
        `${verdict.toUpperCase()}: ${answer.source} → ${answer.destination} on ${answer.port}/${answer.protocol}`));
      if (answer.explained) out.append(el("p", { className: "muted small", text: `Explained pair: ${answer.explained}` }));
      if (answer.pairs) {
        const p = answer.pairs;
        out.append(el("p", { className: "small", text: `${p.total} pod pairs: ${p.allowed} allowed, ${p.denied} denied, ${p.unknown} undecided` }));
      }
      for (const decision of answer.decisions || []) {
        const state_ = decision.allowed === true ? "allowed" : decision.allowed === false ? "denied" : "undecided";
        out.append(el("div", { className: "decision" },
          el("div", {}, el("strong", { text: decision.direction }), ` at ${decision.at}: `,
            el("span", { className: `badge ${state_}`, text: state_ })),
          el("pre", { className: "path", text: decision.path })));
      }
      const blocking = answer.blockingPolicies || [];
      if (blocking.length) {
        out.append(el("p", { className: "small", text: "Blocked by: " +
          blocking.map((r) => [r.kind, r.namespace, r.name].filter(Boolean).join("/")).join(", ") }));
        for (const ref of blocking) {
          state.cy.getElementById([ref.kind, ref.namespace, ref.name].filter(Boolean).join("/")).addClass("blocking");
        }
      }
      for (const reason of answer.notEvaluated || []) {
        out.append(el("p", { className: "muted small", text: `Not evaluated: ${reason}` }));
      }
      if (answer.suggestion) out.append(richText(answer.suggestion, "suggestion small", "Suggestion:"));
    }

    return { showDetails, showDeleted, setEndpoint, markEndpoints, runVerdict };
  }

  window.NetsightPanels = { create };
})();
