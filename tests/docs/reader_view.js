// What a reader sees on the current page, measured in the browser (the layout engine is
// the oracle). Run with Selenium's execute_async_script; the callback receives
// {column: px, problems: [{check, what, detail}], signatures: [{id, text}]}.
//
// Checks, all inside the article column (`article.md-content__inner` minus its padding):
//   table    - a table wider than the column (its rendered box or its scrollable content);
//   overflow - a code block, figure, image or other box that reaches past the column
//              edges without an ancestor (or itself) scrolling sideways within the column;
//   page     - the page itself scrolls sideways;
//   rst      - a literal RST role (:class:`x`) or ``x`` pair in prose (text outside code);
//   text     - a figure (SVG image) whose smallest text is under MIN_TEXT_PX as shown;
//   notext   - an SVG figure with no <text> element (labels drawn as paths cannot be read
//              by a screen reader, found by search, or measured).
// `signatures` lists, per documented function (mkdocstrings), the text of the first
// signature a reader meets under its heading; the test compares it with the code.
const MIN_TEXT_PX = 9;
const done = arguments[arguments.length - 1];

function describe(el) {
  let heading = null;
  for (let node = el; node && !heading; node = node.previousElementSibling || node.parentElement) {
    if (/^H[1-6]$/.test(node.tagName)) heading = node;
  }
  const text = (el.getAttribute && (el.getAttribute("src") || el.getAttribute("alt"))) ||
    (el.textContent || "").trim().slice(0, 60);
  return `<${el.tagName.toLowerCase()}> ${JSON.stringify(text)}` +
    (heading ? ` under "${heading.textContent.replace("¶", "").trim().slice(0, 60)}"` : "");
}

async function measureSvg(img) {
  // Lay the SVG document out inline at exactly the size the <img> has on the page, then
  // read every <text>'s font size through its screen transform.
  const source = await (await fetch(img.currentSrc || img.src)).text();
  const box = document.createElement("div");
  box.style.cssText = "position:absolute;left:-20000px;top:0;";
  box.innerHTML = source;
  const svg = box.querySelector("svg");
  if (!svg) return { sizes: [], count: 0 };
  svg.setAttribute("width", img.getBoundingClientRect().width);
  svg.setAttribute("height", img.getBoundingClientRect().height);
  document.body.appendChild(box);
  const sizes = [];
  for (const t of svg.querySelectorAll("text")) {
    if (!(t.textContent || "").trim()) continue;
    const m = t.getScreenCTM();
    const px = parseFloat(getComputedStyle(t).fontSize) * Math.hypot(m.a, m.b);
    sizes.push({ px, text: t.textContent.trim().slice(0, 40) });
  }
  box.remove();
  return { sizes, count: svg.querySelectorAll("text").length };
}

async function main() {
  const article = document.querySelector("article.md-content__inner");
  const problems = [];
  if (!article) return { column: 0, problems: [{ check: "page", what: "no article", detail: "" }] };
  const style = getComputedStyle(article);
  const box = article.getBoundingClientRect();
  const left = box.left + parseFloat(style.paddingLeft);
  const right = box.right - parseFloat(style.paddingRight);
  const column = right - left;
  const slack = 1;

  for (const table of article.querySelectorAll("table")) {
    const width = Math.max(table.getBoundingClientRect().width, table.scrollWidth);
    if (width > column + slack) {
      problems.push({ check: "table", what: describe(table),
                      detail: `${Math.round(width)} px wide in a ${Math.round(column)} px column` });
    }
  }

  // A scroll container may reach into the article's margins (Material's table wrapper
  // has negative margins), not past the content area.
  const outer = article.parentElement.getBoundingClientRect();
  const scrolls = (el) => {
    const ox = getComputedStyle(el).overflowX;
    const r = el.getBoundingClientRect();
    return (ox === "auto" || ox === "scroll") && r.left >= outer.left - slack && r.right <= outer.right + slack;
  };
  // Inline code is measured by its glyphs: the padding of its background may touch the
  // column's edge where a line wraps.
  const extent = (el) => {
    if (el.tagName === "PRE" || (el.tagName === "CODE" && el.closest("pre"))) {
      // A code block's lines may spill out of its box (overflow visible) or be cut
      // (overflow hidden): either way the reader cannot scroll to them.
      const r = el.getBoundingClientRect();
      const ox = getComputedStyle(el).overflowX;
      const spill = ox === "auto" || ox === "scroll" ? 0 : el.scrollWidth - el.clientWidth;
      return { width: r.width + Math.max(0, spill), left: r.left, right: r.right + Math.max(0, spill) };
    }
    if (el.tagName !== "CODE") return el.getBoundingClientRect();
    const range = document.createRange();
    range.selectNodeContents(el);
    const rects = [...range.getClientRects()].filter((r) => r.width > 0);
    if (!rects.length) return { width: 0, left: left, right: left };
    const l = Math.min(...rects.map((r) => r.left)), rr = Math.max(...rects.map((r) => r.right));
    return { width: rr - l, left: l, right: rr };
  };
  for (const el of article.querySelectorAll("pre, code, img, svg, figure, object, iframe, video, div")) {
    const r = extent(el);
    if (r.width === 0 || (r.left >= left - slack && r.right <= right + slack)) continue;
    let ok = false;
    for (let node = el; node && node !== article; node = node.parentElement) {
      if (scrolls(node)) { ok = true; break; }
    }
    if (!ok && !el.closest("table")) {  // tables are the "table" check's business
      problems.push({ check: "overflow", what: describe(el),
                      detail: `spans ${Math.round(r.left - left)}..${Math.round(r.right - left)} px ` +
                              `of a ${Math.round(column)} px column, no scrollbar of its own` });
    }
  }
  if (document.documentElement.scrollWidth > window.innerWidth + slack) {
    problems.push({ check: "page", what: "the page scrolls sideways",
                    detail: `${document.documentElement.scrollWidth} px > ${window.innerWidth} px` });
  }

  const role = /:(?:py:)?(?:class|func|meth|mod|attr|data|exc|obj|const):`/;
  const pair = /``[^`\n]+``/;
  const walker = document.createTreeWalker(article, NodeFilter.SHOW_TEXT);
  const prose = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if (!n.parentElement.closest("pre, code, kbd, samp, script, style")) prose.push(n);
  }
  // Adjacent text nodes (split by inline markup) are read together, as a reader reads them.
  const BLOCK = "p, li, td, th, dd, dt, h1, h2, h3, h4, h5, h6, div";
  const blocks = new Map();
  for (const n of prose) {
    const block = n.parentElement.closest(BLOCK) || article;
    blocks.set(block, (blocks.get(block) || "") + n.textContent);
  }
  for (const [block, text] of blocks) {
    const m = text.match(role) || text.match(pair);
    if (m) {
      const i = text.indexOf(m[0]);
      problems.push({ check: "rst", what: describe(block),
                      detail: JSON.stringify(text.slice(Math.max(0, i - 40), i + 60)) });
    }
  }

  for (const img of article.querySelectorAll("img")) {
    const src = img.currentSrc || img.src;
    if (!/\.svg(\?|#|$)/.test(src)) continue;
    if (!img.complete || img.naturalWidth === 0) {
      problems.push({ check: "text", what: describe(img), detail: "figure did not load" });
      continue;
    }
    const { sizes, count } = await measureSvg(img);
    if (count === 0) {
      problems.push({ check: "notext", what: describe(img), detail: "no <text> in the SVG" });
      continue;
    }
    const smallest = sizes.reduce((a, b) => (b.px < a.px ? b : a), sizes[0]);
    if (smallest && smallest.px < MIN_TEXT_PX - 0.01) {
      problems.push({ check: "text", what: describe(img),
                      detail: `smallest text ${smallest.px.toFixed(1)} px (${JSON.stringify(smallest.text)}) ` +
                              `at ${Math.round(img.getBoundingClientRect().width)} px wide` });
    }
  }
  // API pages: the first signature shown for each documented function or method.
  const signatures = [];
  for (const fn of article.querySelectorAll(".doc-function")) {
    const heading = fn.querySelector(".doc-heading[id]");
    const first = fn.querySelector(".doc-signature");
    if (heading && first) signatures.push({ id: heading.id, text: first.textContent });
  }
  return { column, problems, signatures };
}

main().then(done, (err) => done({ column: 0, problems: [{ check: "script", what: String(err), detail: err.stack || "" }] }));
