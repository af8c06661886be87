// netsight dashboard: where nodes go (window.NetsightLayout). Each namespace is laid out on its
// own and the namespaces packed side by side; fitting counts nodes, not labels.
"use strict";

(() => {
  // Beyond this many nodes cose's quadratic cost shows: a grid per namespace instead.
  const COSE_LIMIT = 800;
  const GROUP_GAP = 90; // between two namespace boxes, room for the lower one's title

  // Each namespace on its own (cose's compound mode spreads a cluster's namespaces over tens
  // of thousands of pixels): what is linked by cose, the unlinked in rows beneath; then the
  // namespaces packed in rows, about as wide as the window's shape asks.
  function layoutGroups(cy, visible, coseLimit = COSE_LIMIT) {
    const groups = new Map();
    visible.nodes().filter((n) => !n.isParent()).forEach((n) => {
      const key = n.data("parent") || "";
      groups.set(key, (groups.get(key) || cy.collection()).union(n));
    });
    const cose = visible.nodes().length <= coseLimit;
    const boxes = [];
    for (const key of [...groups.keys()].sort()) {
      const members = groups.get(key);
      const edges = members.edgesWith(members).not(".hidden");
      const linked = members.filter((n) => n.connectedEdges().intersection(edges).length > 0);
      let box = null;
      if (cose && linked.length > 1) {
        // With their box: cose reads each node's parent from the elements it lays out.
        linked.union(linked.parent()).union(edges).layout({ name: "cose", animate: false,
          randomize: true, fit: false, nodeDimensionsIncludeLabels: false, numIter: 600,
          idealEdgeLength: () => 40, nodeRepulsion: () => 8000, componentSpacing: 40 }).run();
        box = linked.boundingBox({ includeLabels: false, includeOverlays: false });
      }
      const rest = box ? members.difference(linked) : members;
      gridOf(rest, box ? { x: box.x1, y: box.y2 + 50, width: box.w } : { x: 0, y: 0, width: 0 });
      boxes.push({ members, box: members.boundingBox({ includeLabels: false, includeOverlays: false }) });
    }
    const area = boxes.reduce((sum, b) => sum + (b.box.w + GROUP_GAP) * (b.box.h + GROUP_GAP), 0);
    const aspect = Math.max(0.5, Math.min(3, cy.width() / Math.max(1, cy.height())));
    const rowWidth = Math.max(Math.sqrt(area * aspect), ...boxes.map((b) => b.box.w));
    let x = 0;
    let y = 0;
    let rowHeight = 0;
    for (const { members, box } of boxes) {
      if (x > 0 && x + box.w > rowWidth) {
        x = 0;
        y += rowHeight + GROUP_GAP;
        rowHeight = 0;
      }
      members.shift({ x: x - box.x1, y: y - box.y1 });
      x += box.w + GROUP_GAP;
      rowHeight = Math.max(rowHeight, box.h);
    }
  }

  // Nodes in rows by kind, then name, from `at`: as wide as `at.width`, or square.
  function gridOf(members, at) {
    const STEP_X = 80;
    const STEP_Y = 45;
    const sorted = members.sort((a, b) => a.data("kind").localeCompare(b.data("kind")) ||
      a.data("name").localeCompare(b.data("name")));
    const cols = Math.max(1, Math.floor(at.width / STEP_X) + 1, Math.ceil(Math.sqrt(sorted.length)));
    sorted.forEach((n, i) => n.position({ x: at.x + (i % cols) * STEP_X,
      y: at.y + Math.floor(i / cols) * STEP_Y }));
  }

  // cy.fit() counts labels in, and labels grow in the model as one zooms out (look.js):
  // fit the nodes alone.
  function fitTo(cy, eles) {
    const box = eles.boundingBox({ includeLabels: false, includeOverlays: false });
    if (!(box.w > 0 && box.h > 0)) return;
    const pad = 30;
    const zoom = Math.min(cy.maxZoom(), Math.max(cy.minZoom(),
      Math.min((cy.width() - 2 * pad) / box.w, (cy.height() - 2 * pad) / box.h)));
    cy.viewport({ zoom, pan: { x: (cy.width() - zoom * (box.x1 + box.x2)) / 2,
      y: (cy.height() - zoom * (box.y1 + box.y2)) / 2 } });
  }

  window.NetsightLayout = { layoutGroups, fitTo };
})();
