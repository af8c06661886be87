// netsight dashboard: the live graph (/api/graph, then /api/graph/changes), namespaces as
// groups, the findings panel (/api/findings/overview), an object's findings (/api/findings)
// and find_blocking_policies' verdict (/api/verdict). Helpers: dom.js, look.js (shapes,
// colours, legend), labels.js (labels that do not overlap), findings.js (the panel).
// Plain DOM: text goes in with textContent, never innerHTML, so names cannot inject markup.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const { el, clear, api, errorText } = window.NetsightDom;
  const Look = window.NetsightLook;
  const Labels = window.NetsightLabels;
  const Layout = window.NetsightLayout;

  const EDGE_LABELS = {
    selects: "selects", applies_to: "policy applies to", targets: "slice targets",
    belongs_to: "slice belongs to", routes_to: "routes to", attaches_to: "route attaches to",
    uses_class: "uses class", owned_by: "owned by", target_ref: "policy targets",
    configures: "mesh rule for",
  };
  const GROUP_PREFIX = "ns-group/"; // a namespace drawn without its Namespace object
  const SEVERITY_RANK = { critical: 0, warning: 1, info: 2, ok: 3 };

  const state = {
    cy: null,
    summary: null,
    namespace: "",
    around: null, // "Kind/ns/name": only its neighbourhood is drawn (for graphs too large)
    generation: 0,
    events: null,
    hiddenKinds: new Set(),
    // Policies apply to every pod they select and slices target every endpoint: drawn for the
    // selected node only by default, or the graph is a hairball (and cose crawls through it).
    // A namespace's objects are drawn inside its box: its "contains" edges are not drawn.
    hiddenEdgeTypes: new Set(["applies_to", "targets"]),
    selected: null, // node id
    source: null, // {id, label, arg}
    destination: null,
    detailsToken: 0,
    verdictToken: 0,
    severities: {}, // node id -> worst finding severity
    changes: 0,
    findings: null, // the findings panel (findings.js)
    labelledAt: null, // the zoom the labels shown were chosen at
  };
  const panels = window.NetsightPanels.create(state, (key) => setAround(key),
    () => soon("labels", 50, restyle));

  // --- small helpers -----------------------------------------------------------------------

  function notice(text) {
    const box = $("notice");
    box.textContent = text || "";
    box.hidden = !text;
  }

  // --- the graph --------------------------------------------------------------------------

  function nodeData(node) {
    const look = Look.lookOf(node.kind);
    const namespace = node.namespace || null;
    return {
      id: node.id, kind: node.kind, namespace, name: node.name, label: node.name,
      full: namespace ? `${node.kind} ${namespace}/${node.name}` : `${node.kind} ${node.name}`,
      color: look.color, shape: look.shape, w: look.w, h: look.h,
    };
  }

  function edgeData(link) {
    return { id: `${link.source}|${link.type}|${link.target}`, source: link.source,
      target: link.target, type: link.type };
  }

  // The box a namespace's objects are drawn in: its Namespace node, or a stand-in when the
  // Namespace object is not drawn (a neighbourhood, a namespace the caller may not list).
  function groupNode(namespace) {
    return { group: "nodes", data: { ...nodeData({ id: GROUP_PREFIX + namespace, kind: "Namespace",
      namespace: null, name: namespace }), synthetic: true } };
  }

  function groupId(namespace, ids) {
    if (!namespace) return null;
    const real = `Namespace/${namespace}`;
    return ids.has(real) ? real : GROUP_PREFIX + namespace;
  }

  function elementsOf(data) {
    const elements = [];
    const ids = new Set(data.nodes.map((n) => n.id));
    const groups = new Set();
    for (const node of data.nodes) {
      const item = nodeData(node);
      const parent = groupId(item.namespace, ids);
      if (parent) {
        item.parent = parent;
        if (!ids.has(parent) && !groups.has(parent)) {
          groups.add(parent);
          elements.push(groupNode(item.namespace));
        }
      }
      elements.push({ group: "nodes", data: item });
    }
    for (const link of data.links) {
      if (link.type !== "contains" && ids.has(link.source) && ids.has(link.target)) {
        elements.push({ group: "edges", data: edgeData(link) });
      }
    }
    return elements;
  }

  // The objects drawn: every node but the stand-ins for namespaces.
  function objects() {
    return state.cy.nodes().filter((n) => !n.data("synthetic"));
  }

  function relabel() {
    const cy = state.cy;
    const texts = Look.labelTexts(cy.nodes().map((n) => n.data()));
    cy.batch(() => cy.nodes().forEach((n) => {
      const text = texts.get(n.id());
      if (n.data("label") !== text) n.data("label", text);
    }));
  }

  // Labels keep their size on screen (look.js), so the style follows the zoom; then which
  // labels fit is decided again (labels.js).
  let styledZoom = 1;
  function restyle() {
    const cy = state.cy;
    const zoom = cy.zoom();
    if (Math.abs(zoom / styledZoom - 1) > 0.02) {
      styledZoom = zoom;
      cy.style(Look.style(zoom));
    }
    Labels.declutter(cy, state);
    state.labelledAt = zoom; // for tests: the labels shown are those chosen at this zoom
  }

  function runLayout() {
    const cy = state.cy;
    const visible = cy.elements().not(".hidden");
    if (!visible.length) return;
    Layout.layoutGroups(cy, visible);
    Layout.fitTo(cy, visible);
    if (cy.zoom() > 1) { // a handful of nodes: fit would blow them up
      cy.zoom(1);
      cy.center(visible);
    }
    restyle();
  }

  function initGraph() {
    state.cy = cytoscape({
      container: $("graph"),
      style: Look.style(1),
      minZoom: 0.05,
      maxZoom: 4,
      boxSelectionEnabled: false,
    });
    const cy = state.cy;
    cy.on("tap", "node", (event) => {
      if (!event.target.data("synthetic")) select(event.target.id());
    });
    cy.on("tap", (event) => {
      if (event.target === cy) select(null);
    });
    cy.on("mouseover", "node", (event) => event.target.addClass("hover"));
    cy.on("mouseout", "node", (event) => event.target.removeClass("hover"));
    cy.on("viewport", () => soon("labels", 120, restyle));
    window.netsight = { state, cy, select, setEndpoint: panels.setEndpoint, reload, focus, objects, declutter: restyle };
  }

  async function loadSummary() {
    const summary = await api("api/graph/summary");
    state.summary = summary;
    $("cluster").textContent = `${summary.clusterName} · ${summary.source}`;
    const select = clear($("namespace"));
    const tooMany = summary.nodes > summary.drawLimit;
    select.append(el("option", { value: "", disabled: tooMany },
      `All namespaces (${summary.nodes} objects${tooMany ? ", too many to draw" : ""})`));
    for (const [namespace, count] of Object.entries(summary.namespaces)) {
      select.append(el("option", { value: namespace }, `${namespace} (${count})`));
    }
    const params = new URLSearchParams(location.search);
    state.around = params.get("around") || null;
    const wanted = params.get("namespace") || "";
    if (wanted && wanted in summary.namespaces) state.namespace = wanted;
    else if (tooMany) state.namespace = "";
    select.value = state.namespace;
  }

  const AROUND_HINT = " Or type an object as Kind/namespace/name in Find (e.g. " +
    "Service/shop/cart) to draw its neighbourhood.";

  function showScope() {
    const scope = clear($("scope"));
    scope.hidden = !state.around;
    if (state.around) {
      scope.append(`Neighbourhood of ${state.around} `,
        el("button", { type: "button", id: "clear-around", title: "Back to the namespace view",
          onclick: () => setAround(null) }, "×"));
    }
  }

  function syncUrl() {
    const url = new URL(location.href);
    for (const [name, value] of [["namespace", state.namespace], ["around", state.around]]) {
      if (value) url.searchParams.set(name, value);
      else url.searchParams.delete(name);
    }
    history.replaceState(null, "", url);
  }

  function setAround(key) {
    state.around = key;
    syncUrl();
    reload().catch((error) => notice(`Cannot load the graph: ${errorText(error)}`));
  }

  function nothingDrawn(text) {
    state.cy.elements().remove();
    notice(text);
    closeStream();
    updateCounts();
  }

  async function reload() {
    const summary = state.summary;
    const cy = state.cy;
    showScope();
    if (!state.around && !state.namespace && summary.nodes > summary.drawLimit) {
      nothingDrawn(`This cluster holds ${summary.nodes} objects; drawing more than ` +
        `${summary.drawLimit} at once is neither readable nor fast. Pick a namespace above ` +
        "(or open /dashboard?namespace=NAME)." + AROUND_HINT);
      return;
    }
    let url = "api/graph";
    if (state.around) url += `?around=${encodeURIComponent(state.around)}&depth=1`;
    else if (state.namespace) url += `?namespace=${encodeURIComponent(state.namespace)}`;
    let data;
    try {
      data = await api(url);
    } catch (error) {
      if (!state.around) throw error;
      nothingDrawn(`Cannot draw the neighbourhood of ${state.around}: ${errorText(error)}`);
      return;
    }
    if (data.nodes.length > summary.drawLimit) {
      const what = state.around ? `The neighbourhood of ${state.around}` : `Namespace ${state.namespace}`;
      nothingDrawn(`${what} holds ${data.nodes.length} objects, more than the ` +
        `${summary.drawLimit} drawn at once.` + AROUND_HINT);
      return;
    }
    notice("");
    state.generation = data.graph.generation;
    cy.batch(() => {
      cy.elements().remove();
      cy.add(elementsOf(data));
    });
    relabel();
    refreshKinds();
    refreshEdgeTypes();
    applyKindFilter();
    runLayout();
    panels.markEndpoints();
    updateCounts();
    openStream();
    loadSeverities();
    if (state.selected && !cy.getElementById(state.selected).length) select(null);
  }

  function updateCounts() {
    const cy = state.cy;
    const nodes = objects().length;
    const edges = cy.edges().length;
    const changes = state.changes ? ` · ${state.changes} live change(s)` : "";
    $("counts").textContent = `${nodes} nodes · ${edges} edges · generation ${state.generation}${changes}`;
  }

  // --- kind filter ------------------------------------------------------------------------

  // A checkbox for `value`, ticked unless `hidden` holds it; unticking adds it there.
  function toggle(value, hidden) {
    const input = el("input", { type: "checkbox", value });
    input.checked = !hidden.has(value);
    input.addEventListener("change", () => {
      if (input.checked) hidden.delete(value);
      else hidden.add(value);
      applyKindFilter();
    });
    return input;
  }

  function refreshKinds() {
    const box = $("kinds");
    const counts = {};
    objects().forEach((node) => {
      const kind = node.data("kind");
      counts[kind] = (counts[kind] || 0) + 1;
    });
    clear(box);
    for (const kind of Object.keys(counts).sort()) {
      const swatch = Look.swatch(Look.lookOf(kind));
      if (kind === "Namespace") { // a group: hiding it would hide its objects
        box.append(el("div", { className: "kind", "data-kind": kind }, swatch,
          ` ${kind} (group) `, el("span", { className: "muted", text: `(${counts[kind]})` })));
        continue;
      }
      box.append(el("label", { className: "kind", "data-kind": kind },
        toggle(kind, state.hiddenKinds), swatch, ` ${kind} `,
        el("span", { className: "muted", text: `(${counts[kind]})` })));
    }
  }

  function refreshEdgeTypes() {
    const counts = {};
    state.cy.edges().forEach((edge) => {
      const type = edge.data("type");
      counts[type] = (counts[type] || 0) + 1;
    });
    const box = clear($("edge-types"));
    for (const type of Object.keys(counts).sort()) {
      box.append(el("label", {}, toggle(type, state.hiddenEdgeTypes), el("span", { className: `swatch e-${type}` }),
        `${EDGE_LABELS[type] || type} `, el("span", { className: "muted", text: `(${counts[type]})` })));
    }
  }

  function applyKindFilter() {
    const cy = state.cy;
    cy.batch(() => {
      cy.nodes().forEach((node) => {
        node.toggleClass("hidden", state.hiddenKinds.has(node.data("kind")));
      });
      cy.edges().forEach((edge) => {
        const focused = state.selected !== null && (edge.data("source") === state.selected ||
          edge.data("target") === state.selected);
        edge.toggleClass("hidden", state.hiddenEdgeTypes.has(edge.data("type")) && !focused);
      });
    });
    soon("labels", 50, restyle);
  }

  // --- findings: the panel and the node borders -------------------------------------------------

  async function loadSeverities() {
    // Only the namespace drawn is analyzed; the whole cluster only when all of it is drawn
    // (then it is small). A neighbourhood: its object's namespace (cluster-scoped: skipped).
    let namespace = state.namespace;
    if (state.around) {
      const parts = state.around.split("/");
      if (parts.length !== 3) {
        state.findings.render({ findings: [] }, `Findings are listed by namespace; ${state.around} has none.`);
        return;
      }
      namespace = parts[1];
    }
    const url = "api/findings/overview?min_severity=info" +
      (namespace ? `&namespace=${encodeURIComponent(namespace)}` : "");
    try {
      const overview = await api(url);
      state.severities = overview.objects;
      paintSeverities();
      state.findings.render(overview);
      soon("labels", 50, restyle); // objects with findings label first
    } catch (error) {
      console.warn("findings overview:", errorText(error));
    }
  }

  // A finding's object in the graph: selected, centred and zoomed to where its label shows.
  // One not drawn (another namespace, outside a neighbourhood) gets its neighbourhood drawn.
  function focus(key) {
    const cy = state.cy;
    let node = cy.getElementById(key);
    if (node.length && node.hasClass("hidden")) { // its kind is filtered out: show it again
      state.hiddenKinds.delete(node.data("kind"));
      refreshKinds();
      applyKindFilter();
    }
    if (!node.length) {
      state.around = key;
      syncUrl();
      reload().then(() => {
        node = cy.getElementById(key);
        if (node.length) focus(key);
      }).catch((error) => notice(`Cannot load the graph: ${errorText(error)}`));
      return;
    }
    select(key);
    // At once, not animated: the labels are chosen again for the zoom it ends on. Centred on
    // the node itself: cy.center() would count its label in, which grows as one zooms out.
    const zoom = Math.max(cy.zoom(), 1.5);
    const at = node.position();
    cy.viewport({ zoom, pan: { x: cy.width() / 2 - at.x * zoom, y: cy.height() / 2 - at.y * zoom } });
    restyle();
  }

  function paintSeverities() {
    const cy = state.cy;
    cy.batch(() => {
      cy.nodes().removeClass("sev-critical sev-warning");
      for (const [id, severity] of Object.entries(state.severities)) {
        const node = cy.getElementById(id);
        if (node.length && (severity === "critical" || severity === "warning")) {
          node.addClass(`sev-${severity}`);
        }
      }
    });
  }

  // --- live updates -----------------------------------------------------------------------

  function closeStream() {
    if (state.events) state.events.close();
    state.events = null;
    setLive("not live", false);
  }

  function setLive(text, on) {
    const live = $("live");
    live.textContent = text;
    live.className = `live ${on ? "on" : "off"}`;
  }

  function openStream() {
    closeStream();
    const events = new EventSource(`api/graph/changes?since=${state.generation}`);
    state.events = events;
    events.addEventListener("open", () => setLive("live", true));
    events.addEventListener("error", () => setLive("reconnecting…", false));
    events.addEventListener("change", (event) => {
      try {
        applyChange(JSON.parse(event.data));
      } catch (error) {
        console.error("cannot apply a change", error);
      }
    });
    events.addEventListener("reset", () => {
      reload().catch((error) => notice(`Cannot reload the graph: ${errorText(error)}`));
    });
  }

  // At most one run per period however fast changes come (a reset timer would starve).
  const pending = new Map();
  function soon(name, delay, run) {
    if (pending.has(name)) return;
    pending.set(name, setTimeout(() => {
      pending.delete(name);
      run();
    }, delay));
  }

  function shows(change) {
    if (state.around) { // what is drawn, and what comes to link to it
      const cy = state.cy;
      return cy.getElementById(change.key).length > 0 || (change.links || []).some((l) =>
        cy.getElementById(l.source === change.key ? l.target : l.source).length > 0);
    }
    return !state.namespace || change.namespace === state.namespace;
  }

  function applyChange(change) {
    state.generation = Math.max(state.generation, change.generation);
    if (!shows(change)) return;
    const cy = state.cy;
    state.changes += 1;
    let node = cy.getElementById(change.key);
    if (change.type === "DELETED") {
      if (node.length && node.isParent()) { // a Namespace: its objects move to a stand-in box
        node.children().move({ parent: groupFor(node.data("name"), true).id() });
      }
      if (node.length) node.remove();
      if (state.selected === change.key) panels.showDeleted(change.key);
    } else {
      cy.batch(() => {
        if (!node.length) {
          const data = nodeData({ id: change.key, kind: change.kind, namespace: change.namespace,
            name: change.name });
          if (data.namespace) data.parent = groupFor(data.namespace, false).id();
          node = cy.add({ group: "nodes", data, position: placeNear(change) });
          if (change.kind === "Namespace") adoptStandIn(change.name, node);
        }
        node.connectedEdges().remove();
        for (const link of change.links || []) {
          if (link.type !== "contains" && cy.getElementById(link.source).length &&
              cy.getElementById(link.target).length) {
            const data = edgeData(link);
            if (!cy.getElementById(data.id).length) cy.add({ group: "edges", data });
          }
        }
      });
      applyKindFilter();
      node.addClass("changed");
      setTimeout(() => node.removeClass("changed"), 2000);
    }
    // The selected object's findings may change with it or with what links to it (a pod its
    // Service now selects, a policy that now applies to it).
    const selected = state.selected;
    if (selected && change.type !== "DELETED" && (change.key === selected ||
        (change.links || []).some((l) => l.source === selected || l.target === selected))) {
      soon("details", 300, () => {
        if (state.selected === selected) panels.showDetails(selected);
      });
    }
    soon("filters", 250, () => { // counts per kind and edge type, labels of same-named objects
      relabel();
      refreshKinds();
      refreshEdgeTypes();
    });
    updateCounts();
    soon("severities", 2000, loadSeverities);
  }

  // The box of a namespace: its Namespace node unless `standIn`, else a stand-in (made once).
  function groupFor(namespace, standIn) {
    const cy = state.cy;
    const real = cy.getElementById(`Namespace/${namespace}`);
    if (!standIn && real.length) return real;
    const existing = cy.getElementById(GROUP_PREFIX + namespace);
    return existing.length ? existing : cy.add(groupNode(namespace));
  }

  // A Namespace that arrives takes over its stand-in's objects.
  function adoptStandIn(namespace, node) {
    const standIn = state.cy.getElementById(GROUP_PREFIX + namespace);
    if (!standIn.length) return;
    standIn.children().move({ parent: node.id() });
    standIn.remove();
  }

  function placeNear(change) {
    const cy = state.cy;
    for (const link of change.links || []) {
      const other = link.source === change.key ? link.target : link.source;
      const near = cy.getElementById(other);
      if (near.length) {
        const p = near.position();
        return { x: p.x + 20 + Math.random() * 20, y: p.y + 20 + Math.random() * 20 };
      }
    }
    const ext = cy.extent();
    return { x: (ext.x1 + ext.x2) / 2, y: (ext.y1 + ext.y2) / 2 };
  }

  // --- the side panel: an object and its findings -------------------------------------------

  function select(id) {
    const cy = state.cy;
    state.selected = id;
    cy.elements().unselect();
    if (!id) {
      applyKindFilter();
      clear($("details")).append(el("h2", { text: "Object" }),
        el("p", { className: "muted", text: "Click a node to see its kind, namespace, name and findings." }));
      return;
    }
    const node = cy.getElementById(id);
    if (node.length) node.select();
    applyKindFilter();
    panels.showDetails(id);
  }

  // --- controls ----------------------------------------------------------------------------

  function wireControls() {
    $("namespace").addEventListener("change", () => {
      state.namespace = $("namespace").value;
      state.around = null;
      syncUrl();
      reload().catch((error) => notice(`Cannot load the graph: ${errorText(error)}`));
    });
    $("fit").addEventListener("click", () => Layout.fitTo(state.cy, state.cy.elements().not(".hidden")));
    $("relayout").addEventListener("click", runLayout);
    $("check").addEventListener("click", panels.runVerdict);
    $("port").addEventListener("change", panels.runVerdict);
    $("protocol").addEventListener("change", panels.runVerdict);
    $("search").addEventListener("keydown", (event) => {
      if (event.key !== "Enter") return;
      const typed = $("search").value.trim();
      const text = typed.toLowerCase();
      if (!text) return;
      const cy = state.cy;
      const parts = typed.split("/");
      if (parts.length >= 2 && parts.length <= 3 && parts.every(Boolean) && !cy.getElementById(typed).length) {
        setAround(typed); // an object not drawn: draw its neighbourhood
        return;
      }
      const found = objects().filter((n) => !n.hasClass("hidden") &&
        (n.data("name").toLowerCase().includes(text) || n.id().toLowerCase() === text));
      if (!found.length) {
        notice(`Nothing named like “${$("search").value.trim()}” is drawn.`);
        return;
      }
      notice("");
      focus(found[0].id());
    });
  }

  async function start() {
    initGraph();
    state.findings = window.NetsightFindings.panel($("findings-panel"), focus);
    Look.marksLegend($("marks"));
    wireControls();
    try {
      await loadSummary();
      await reload();
    } catch (error) {
      notice(`Cannot load the graph: ${errorText(error)}`);
    }
  }

  if (typeof cytoscape !== "function") {
    notice("Cytoscape.js did not load (dashboard/static/vendor/cytoscape.min.js).");
  } else {
    start();
  }
})();
