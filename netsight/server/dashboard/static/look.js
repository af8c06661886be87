// netsight dashboard: how each kind is drawn (shape, colour, size), the Cytoscape style built
// from it, and the legend drawn from the same table, so the two cannot disagree
// (window.NetsightLook).
"use strict";

(() => {
  const { el, svg } = window.NetsightDom;

  // First match wins. `short` names a kind in a label when two objects of one namespace share
  // a name (kubectl's short names where there is one).
  const LOOKS = [
    { name: "Namespace (group)", test: (k) => k === "Namespace", shape: "round-rectangle", color: "#52606d", w: 26, h: 14 },
    { name: "Pod", test: (k) => k === "Pod", shape: "ellipse", color: "#3b82f6", w: 10, h: 10 },
    { name: "Service", test: (k) => k === "Service", shape: "round-rectangle", color: "#16a34a", w: 22, h: 16 },
    { name: "Workload", test: (k) => /^(Deployment|StatefulSet|DaemonSet|ReplicaSet|ReplicationController|Job|CronJob)$/.test(k),
      shape: "hexagon", color: "#8b5cf6", w: 18, h: 16 },
    { name: "Endpoints", test: (k) => k === "EndpointSlice" || k === "Endpoints", shape: "diamond", color: "#a3a3a3", w: 10, h: 10 },
    { name: "Mesh routing", test: (k) => k === "VirtualService", shape: "vee", color: "#db2777", w: 18, h: 16 },
    { name: "Mesh destination", test: (k) => k === "DestinationRule" || k === "ServiceEntry", shape: "tag", color: "#be185d", w: 18, h: 14 },
    { name: "Policy", test: (k) => /Policy|PeerAuthentication|Sidecar/.test(k), shape: "octagon", color: "#ea580c", w: 18, h: 18 },
    { name: "Class", test: (k) => /^(IngressClass|GatewayClass)$/.test(k), shape: "cut-rectangle", color: "#0f766e", w: 18, h: 12 },
    { name: "Entry point", test: (k) => k === "Ingress" || /^Gateway\b/.test(k) || /Route$/.test(k) || k === "ListenerSet",
      shape: "triangle", color: "#0d9488", w: 18, h: 16 },
    { name: "Other", test: () => true, shape: "ellipse", color: "#7b8794", w: 14, h: 14 },
  ];
  const SHORT = {
    Namespace: "ns", Pod: "pod", Service: "svc", Deployment: "deploy", StatefulSet: "sts",
    DaemonSet: "ds", ReplicaSet: "rs", ReplicationController: "rc", CronJob: "cj",
    EndpointSlice: "slice", Endpoints: "ep", NetworkPolicy: "netpol", Ingress: "ing",
    IngressClass: "ingclass", VirtualService: "vs", DestinationRule: "dr", ServiceEntry: "se",
    Gateway: "gw", GatewayClass: "gwclass", HTTPRoute: "httproute", AuthorizationPolicy: "authz",
    PeerAuthentication: "pa",
  };
  // Which labels win a spot when they would collide (lower first).
  const KIND_RANK = ["Service", "Entry point", "Mesh routing", "Mesh destination", "Workload",
    "Policy", "Class", "Other", "Pod", "Endpoints"];

  const cache = new Map();
  function lookOf(kind) {
    let look = cache.get(kind);
    if (!look) {
      look = LOOKS.find((l) => l.test(kind));
      cache.set(kind, look);
    }
    return look;
  }

  function shortKind(kind) {
    const bare = kind.split(".")[0];
    return SHORT[kind] || SHORT[bare] || bare.toLowerCase();
  }

  function kindRank(kind) {
    const rank = KIND_RANK.indexOf(lookOf(kind).name);
    return rank < 0 ? KIND_RANK.length : rank;
  }

  // Label texts for the nodes drawn: the name, with the kind when another object of the same
  // namespace (its group) has that name too — "cart · svc", "cart · vs", "cart · dr".
  function labelTexts(nodes) {
    const seen = new Map();
    for (const n of nodes) {
      const key = `${n.namespace || ""}/${n.name}`;
      seen.set(key, (seen.get(key) || 0) + 1);
    }
    const texts = new Map();
    for (const n of nodes) {
      const shared = seen.get(`${n.namespace || ""}/${n.name}`) > 1;
      texts.set(n.id, shared ? `${n.name} · ${shortKind(n.kind)}` : n.name);
    }
    return texts;
  }

  // Labels keep one size on screen at every zoom (fontPx / zoom in the model); which of them
  // show is labels.js's choice.
  function style(zoom) {
    const z = zoom || 1;
    return [
      { selector: "node", style: {
        "background-color": "data(color)", shape: "data(shape)", width: "data(w)", height: "data(h)",
        label: "data(label)", "font-size": 11 / z, color: "#1f2933", "text-valign": "bottom",
        "text-margin-y": 2 / z, "border-width": 0, "text-outline-color": "#fff",
        "text-outline-width": 2 / z, "text-outline-opacity": 0.9 } },
      { selector: "node:parent", style: {
        "background-color": "#f1f5f9", "background-opacity": 0.6, "border-width": 1,
        "border-color": "#94a3b8", "border-style": "dashed", shape: "round-rectangle",
        "text-valign": "top", "text-halign": "center", "text-margin-y": -2 / z,
        "font-size": 13 / z, "font-weight": "bold", color: "#334e68", padding: 12,
        // Labels keep their screen size, so in the model they grow as one zooms out: boxes
        // (and fitting) go by the nodes alone, or zooming out would feed on itself.
        "compound-sizing-wrt-labels": "exclude" } },
      { selector: "edge", style: { width: 1, "line-color": "#cbd2d9", "curve-style": "straight",
        "target-arrow-shape": "triangle", "target-arrow-color": "#cbd2d9", "arrow-scale": 0.6 } },
      { selector: 'edge[type = "selects"]', style: { "line-color": "#16a34a",
        "target-arrow-color": "#16a34a" } },
      { selector: 'edge[type = "applies_to"]', style: { "line-color": "#ea580c",
        "target-arrow-color": "#ea580c", "line-style": "dashed" } },
      { selector: 'edge[type = "routes_to"]', style: { "line-color": "#0d9488",
        "target-arrow-color": "#0d9488", width: 2 } },
      { selector: 'edge[type = "configures"]', style: { "line-color": "#db2777",
        "target-arrow-color": "#db2777", "line-style": "dashed", width: 1.5 } },
      { selector: 'edge[type = "attaches_to"]', style: { "line-color": "#0d9488",
        "target-arrow-color": "#0d9488", "line-style": "dotted" } },
      { selector: 'edge[type = "owned_by"]', style: { "line-color": "#c4b5fd",
        "target-arrow-color": "#c4b5fd" } },
      { selector: "node.sev-warning", style: { "border-width": 3, "border-color": "#f59e0b" } },
      { selector: "node.sev-critical", style: { "border-width": 3, "border-color": "#dc2626" } },
      { selector: "node.blocking", style: { "border-width": 5, "border-color": "#dc2626",
        "border-style": "double" } },
      { selector: "node.changed", style: { "overlay-color": "#facc15", "overlay-opacity": 0.5,
        "overlay-padding": 6 } },
      { selector: "node.src", style: { "outline-width": 4, "outline-color": "#2563eb" } },
      { selector: "node.dst", style: { "outline-width": 4, "outline-color": "#db2777" } },
      { selector: "node:selected", style: { "overlay-color": "#1d4ed8", "overlay-opacity": 0.25,
        "overlay-padding": 5 } },
      { selector: "node.quiet", style: { "text-opacity": 0 } },
      { selector: "node.hover", style: { "text-opacity": 1, label: "data(full)", "z-index": 20,
        "text-background-color": "#fff", "text-background-opacity": 0.95,
        "text-background-padding": 2 / z } },
      { selector: ".faded", style: { opacity: 0.15 } },
      { selector: ".hidden", style: { display: "none" } },
    ];
  }

  // --- the legend -------------------------------------------------------------------------

  // Cytoscape's shapes as SVG in a 16x16 box.
  const POINTS = {
    hexagon: "4,2 12,2 16,8 12,14 4,14 0,8",
    diamond: "8,1 15,8 8,15 1,8",
    octagon: "5,1 11,1 15,5 15,11 11,15 5,15 1,11 1,5",
    triangle: "8,1 15,15 1,15",
    vee: "1,2 8,7 15,2 8,15",
    tag: "1,3 11,3 15,8 11,13 1,13",
    "cut-rectangle": "4,3 12,3 15,6 15,10 12,13 4,13 1,10 1,6",
  };

  function swatch(look, extra) {
    const paint = { fill: look.color, ...(extra || {}) };
    let shape;
    if (look.shape === "ellipse") shape = svg("circle", { cx: 8, cy: 8, r: 6, ...paint });
    else if (look.shape === "round-rectangle") shape = svg("rect", { x: 1, y: 3, width: 14, height: 10, rx: 3, ...paint });
    else shape = svg("polygon", { points: POINTS[look.shape], ...paint });
    return svg("svg", { class: "shape", width: 16, height: 16, viewBox: "0 0 16 16",
      "data-shape": look.shape, "data-color": look.color, "aria-hidden": "true" }, shape);
  }

  // Marks drawn on nodes whatever their kind.
  const MARKS = [
    ["sev-critical", "critical finding", { fill: "#fff", stroke: "#dc2626", "stroke-width": 3 }],
    ["sev-warning", "warning", { fill: "#fff", stroke: "#f59e0b", "stroke-width": 3 }],
    ["blocking", "blocks the checked flow", { fill: "#fff", stroke: "#dc2626", "stroke-width": 1.5, "stroke-dasharray": "1 1" }],
    ["src", "verdict source", { fill: "#fff", stroke: "#2563eb", "stroke-width": 3 }],
    ["dst", "verdict destination", { fill: "#fff", stroke: "#db2777", "stroke-width": 3 }],
  ];

  function marksLegend(box) {
    box.append(el("div", { className: "mark", "data-mark": "namespace" },
      svg("svg", { class: "shape", width: 16, height: 16, viewBox: "0 0 16 16", "aria-hidden": "true" },
        svg("rect", { x: 1, y: 2, width: 14, height: 12, rx: 2, fill: "#f1f5f9", stroke: "#94a3b8",
          "stroke-dasharray": "2 1" })),
      "namespace: a dashed box around its objects"));
    for (const [mark, text, paint] of MARKS) {
      box.append(el("div", { className: "mark", "data-mark": mark },
        swatch({ shape: "ellipse", color: paint.fill }, paint), text));
    }
    box.append(el("p", { className: "muted small", text: "A label hidden to avoid overlap shows on " +
      "hover or when you zoom in." }));
  }

  window.NetsightLook = { lookOf, shortKind, kindRank, labelTexts, style, swatch, marksLegend };
})();
