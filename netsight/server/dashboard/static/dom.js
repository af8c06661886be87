// netsight dashboard: small DOM and fetch helpers shared by the page's scripts
// (window.NetsightDom).
// Text goes in with textContent, never innerHTML, so names cannot inject markup.
"use strict";

(() => {
  const SVG = "http://www.w3.org/2000/svg";

  function el(tag, props, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(props || {})) {
      if (value === undefined || value === null || value === false) continue;
      if (key === "className") node.className = value;
      else if (key === "text") node.textContent = String(value);
      else if (key === "onclick") node.addEventListener("click", value);
      else node.setAttribute(key, String(value));
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function svg(tag, attributes, ...children) {
    const node = document.createElementNS(SVG, tag);
    for (const [key, value] of Object.entries(attributes || {})) node.setAttribute(key, String(value));
    node.append(...children);
    return node;
  }

  function clear(node) {
    while (node.firstChild) node.removeChild(node.firstChild);
    return node;
  }

  // --- text with YAML in it: prose, then the snippet as a code block to copy -------------------

  // A line that continues a YAML snippet: indented, a list item, or a bare "key:" (prose has
  // spaces before its colons).
  const YAML_LINE = /^(\s+\S|- |[\w.\/-]+:(\s|$))/;

  // Splits an analyzer's text into prose and snippets: a snippet starts after a line ending
  // with ":" and runs while lines look like YAML (suggest.py writes "…(spec.ingress):\n<yaml>").
  function textParts(text) {
    const parts = [];
    let prose = [];
    let code = null;
    const flush = () => {
      if (prose.length) parts.push({ type: "prose", text: prose.join("\n") });
      prose = [];
    };
    for (const line of String(text).split("\n")) {
      if (code !== null) {
        if (YAML_LINE.test(line)) {
          code.push(line);
          continue;
        }
        parts.push({ type: "code", text: code.join("\n") });
        code = null;
      }
      prose.push(line);
      if (/:\s*$/.test(line)) {
        flush();
        code = [];
      }
    }
    if (code !== null && code.length) parts.push({ type: "code", text: code.join("\n") });
    flush();
    return parts.filter((p) => p.text.trim());
  }

  async function copyText(text, button) {
    let done = false;
    try {
      await navigator.clipboard.writeText(text);
      done = true;
    } catch (_) { // no clipboard API (an insecure origin): select the text for Ctrl+C
      const range = document.createRange();
      range.selectNodeContents(button.parentElement.querySelector("code"));
      const selection = window.getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
      done = document.execCommand && document.execCommand("copy");
    }
    button.textContent = done ? "Copied" : "Selected: press Ctrl+C";
    setTimeout(() => { button.textContent = "Copy"; }, 1500);
  }

  function codeBlock(text) {
    const button = el("button", { type: "button", className: "copy", title: "Copy to the clipboard" }, "Copy");
    const block = el("div", { className: "code-block" }, button, el("pre", {}, el("code", { className: "yaml", text })));
    button.addEventListener("click", () => copyText(text, button));
    return block;
  }

  // A suggestion or detail: paragraphs as text (line breaks kept), snippets as code blocks.
  function richText(text, className, lead) {
    const box = el("div", { className: `rich ${className || ""}` });
    textParts(text).forEach((part, i) => {
      if (part.type === "code") box.append(codeBlock(part.text));
      else box.append(el("p", { className: "prose" }, i === 0 && lead ? el("strong", { text: lead }) : null,
        i === 0 && lead ? " " : null, part.text));
    });
    return box;
  }

  // --- the JSON endpoints: errors as the ToolError JSON they answer with --------------------

  class ApiError extends Error {
    constructor(message, status, body) {
      super(message);
      this.status = status;
      this.body = body;
    }
  }

  async function api(url, options) {
    const response = await fetch(url, {
      credentials: "same-origin",
      headers: { Accept: "application/json", ...((options && options.headers) || {}) },
      ...(options || {}),
    });
    let body = null;
    try {
      body = await response.json();
    } catch (_) {
      body = null;
    }
    if (!response.ok) {
      const message = body && body.message ? body.message : `${response.status} ${response.statusText}`;
      throw new ApiError(message, response.status, body);
    }
    return body;
  }

  function errorText(error) {
    if (error instanceof ApiError && error.body && error.body.code) {
      return `${error.body.code}: ${error.message}`;
    }
    return String(error && error.message ? error.message : error);
  }

  window.NetsightDom = { el, svg, clear, textParts, codeBlock, richText, api, errorText, ApiError };
})();
