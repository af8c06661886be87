// netsight dashboard: labels that never overlap (window.NetsightLabels).
// Cytoscape draws every label where its node is, so at a cluster's density they pile up
// ("edgepayments"). After each layout, zoom or pan, labels are taken greedily in order of
// importance (the selected node, namespaces, objects with findings, Services before pods…)
// and one whose box meets a box already taken is hidden ("quiet"); zooming in makes room, and
// hovering a node shows its label whatever.
"use strict";

(() => {
  const { kindRank } = window.NetsightLook;
  const SEVERITY = { critical: 0, warning: 1 };
  const GAP = 2; // screen pixels kept between two labels

  function priority(node, state) {
    const id = node.id();
    if (id === state.selected) return [0, 0];
    if ((state.source && state.source.id === id) || (state.destination && state.destination.id === id)) return [0, 1];
    if (node.isParent()) return [1, -node.children().length];
    const severity = SEVERITY[state.severities[id]];
    return [2 + (severity === undefined ? 2 : severity), kindRank(node.data("kind"))];
  }

  // The label's box on screen, or null when it has no text.
  function labelBox(node) {
    if (!node.data("label")) return null;
    const box = node.boundingBox({ includeNodes: false, includeEdges: false, includeLabels: true,
      includeMainLabels: true, includeSourceLabels: false, includeTargetLabels: false,
      includeOverlays: false, includeUnderlays: false });
    if (!(box.w > 0 && box.h > 0)) return null;
    const cy = node.cy();
    const zoom = cy.zoom();
    const pan = cy.pan();
    return { x1: box.x1 * zoom + pan.x, y1: box.y1 * zoom + pan.y,
      x2: box.x2 * zoom + pan.x, y2: box.y2 * zoom + pan.y };
  }

  function meets(a, b) {
    return a.x1 < b.x2 + GAP && b.x1 < a.x2 + GAP && a.y1 < b.y2 + GAP && b.y1 < a.y2 + GAP;
  }

  function declutter(cy, state) {
    const width = cy.width();
    const height = cy.height();
    const candidates = [];
    cy.nodes().forEach((node) => {
      if (node.hasClass("hidden") || !node.visible()) return;
      const box = labelBox(node);
      // Whole on screen: a label cut by the edge reads as another name.
      const onScreen = box && box.x1 >= 0 && box.y1 >= 0 && box.x2 <= width && box.y2 <= height;
      if (onScreen) candidates.push({ node, box, rank: priority(node, state) });
    });
    candidates.sort((a, b) => a.rank[0] - b.rank[0] || a.rank[1] - b.rank[1] ||
      a.node.data("label").localeCompare(b.node.data("label")));
    const taken = [];
    const shown = new Set();
    for (const c of candidates) {
      if (!taken.some((box) => meets(box, c.box))) {
        taken.push(c.box);
        shown.add(c.node.id());
      }
    }
    cy.batch(() => {
      cy.nodes().forEach((node) => node.toggleClass("quiet", !shown.has(node.id())));
    });
    return shown.size;
  }

  window.NetsightLabels = { declutter, labelBox, meets };
})();
