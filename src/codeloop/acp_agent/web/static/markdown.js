// Markdown as DOM nodes, for a model's answers: fenced code (highlighted), headings, lists,
// quotes, tables, rules, paragraphs; inline code, bold, italic and http(s) links. Model text
// only ever becomes text nodes (no HTML is parsed), so an answer cannot inject markup.

import { highlight } from "./highlight.js";

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([\w+#.-]*)/;
const HEADING = /^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const RULE = /^ {0,3}([-*_])( *\1){2,}\s*$/;
const QUOTE = /^ {0,3}> ?/;
const ITEM = /^( {0,3})([-*+]|\d{1,9}[.)])\s+/;
const TABLE_RULE = /^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$/;
const INLINE = /(`+)([\s\S]*?[^`])\1(?!`)|\*\*([\s\S]+?)\*\*|__([\s\S]+?)__|\*([^*\s][\s\S]*?)\*|\b_([^_\s][\s\S]*?)_\b|\[([^\]]+)\]\(([^)\s]+)\)/;

function el(tag, children = [], className = "") {
  const node = document.createElement(tag);
  if (className) node.className = className;
  node.append(...children);
  return node;
}

function inline(text) {
  const nodes = [];
  let rest = text;
  while (rest) {
    const match = INLINE.exec(rest);
    if (!match) {
      nodes.push(document.createTextNode(rest));
      break;
    }
    if (match.index) nodes.push(document.createTextNode(rest.slice(0, match.index)));
    const [whole, , code, bold1, bold2, em1, em2, label, href] = match;
    if (code !== undefined) nodes.push(el("code", [code.trim() ? code.replace(/^ (.*) $/, "$1") : code]));
    else if (bold1 ?? bold2) nodes.push(el("strong", inline(bold1 ?? bold2)));
    else if (em1 ?? em2) nodes.push(el("em", inline(em1 ?? em2)));
    else if (/^https?:\/\//i.test(href)) {
      const link = el("a", inline(label));
      link.href = href;
      link.rel = "noopener noreferrer";
      link.target = "_blank";
      nodes.push(link);
    } else nodes.push(document.createTextNode(whole));
    rest = rest.slice(match.index + whole.length);
  }
  return nodes;
}

function codeBlock(code, lang) {
  const body = el("code", highlight(code, lang));
  if (lang) body.dataset.lang = lang;
  return el("pre", [body], "code");
}

function cells(line) {
  return line.trim().replace(/^\|/, "").replace(/\|$/, "").split("|").map((c) => c.trim());
}

// `source` as block nodes (a partial answer renders too: an open fence runs to the end).
export function renderMarkdown(source) {
  const lines = source.replace(/\r\n?/g, "\n").split("\n");
  const blocks = [];
  let paragraph = [];
  const endParagraph = () => {
    if (paragraph.length) blocks.push(el("p", inline(paragraph.join("\n"))));
    paragraph = [];
  };
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    let match;
    if ((match = FENCE.exec(line))) {
      endParagraph();
      const fence = match[1];
      const body = [];
      i += 1;
      while (i < lines.length && !lines[i].trim().startsWith(fence)) body.push(lines[i++]);
      i += 1;
      blocks.push(codeBlock(body.join("\n"), match[2]));
    } else if ((match = HEADING.exec(line))) {
      endParagraph();
      blocks.push(el(`h${Math.min(match[1].length + 2, 6)}`, inline(match[2])));
      i += 1;
    } else if (RULE.test(line)) {
      endParagraph();
      blocks.push(el("hr"));
      i += 1;
    } else if (QUOTE.test(line)) {
      endParagraph();
      const quoted = [];
      while (i < lines.length && QUOTE.test(lines[i])) quoted.push(lines[i++].replace(QUOTE, ""));
      blocks.push(el("blockquote", renderMarkdown(quoted.join("\n"))));
    } else if ((match = ITEM.exec(line))) {
      endParagraph();
      const ordered = /\d/.test(match[2]);
      const list = el(ordered ? "ol" : "ul");
      if (ordered && parseInt(match[2], 10) !== 1) list.start = parseInt(match[2], 10);
      while (i < lines.length && (match = ITEM.exec(lines[i])) && /\d/.test(match[2]) === ordered) {
        const item = [lines[i].slice(match[0].length)];
        i += 1;
        while (i < lines.length && /^\s{2,}\S/.test(lines[i]) && !ITEM.exec(lines[i])) item.push(lines[i++].trim());
        list.append(el("li", inline(item.join("\n"))));
      }
      blocks.push(list);
    } else if (line.includes("|") && i + 1 < lines.length && TABLE_RULE.test(lines[i + 1])) {
      endParagraph();
      const head = el("tr", cells(line).map((c) => el("th", inline(c))));
      const rows = [];
      i += 2;
      while (i < lines.length && lines[i].includes("|") && lines[i].trim()) {
        rows.push(el("tr", cells(lines[i++]).map((c) => el("td", inline(c)))));
      }
      blocks.push(el("div", [el("table", [el("thead", [head]), el("tbody", rows)])], "table"));
    } else if (!line.trim()) {
      endParagraph();
      i += 1;
    } else {
      paragraph.push(line);
      i += 1;
    }
  }
  endParagraph();
  return blocks;
}
