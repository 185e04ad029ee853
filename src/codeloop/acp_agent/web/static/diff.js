// An ACP diff item ({path, oldText, newText}) as a unified, line-by-line diff a reader sees at
// once: removed lines, added lines, three lines of context, long unchanged runs elided.

const CONTEXT = 3;
const MAX_TABLE = 4_000_000; // cells of the LCS table; past it, all-removed then all-added

function lineOps(before, after) {
  let start = 0;
  while (start < before.length && start < after.length && before[start] === after[start]) start++;
  let endB = before.length;
  let endA = after.length;
  while (endB > start && endA > start && before[endB - 1] === after[endA - 1]) {
    endB--;
    endA--;
  }
  const ops = before.slice(0, start).map((text) => [" ", text]);
  const b = before.slice(start, endB);
  const a = after.slice(start, endA);
  if (b.length * a.length > MAX_TABLE) {
    ops.push(...b.map((t) => ["-", t]), ...a.map((t) => ["+", t]));
  } else {
    const table = Array.from({ length: b.length + 1 }, () => new Uint32Array(a.length + 1));
    for (let i = b.length - 1; i >= 0; i--) {
      for (let j = a.length - 1; j >= 0; j--) {
        table[i][j] = b[i] === a[j] ? table[i + 1][j + 1] + 1 : Math.max(table[i + 1][j], table[i][j + 1]);
      }
    }
    let i = 0;
    let j = 0;
    while (i < b.length || j < a.length) {
      if (i < b.length && j < a.length && b[i] === a[j]) {
        ops.push([" ", b[i++]]);
        j++;
      } else if (i < b.length && (j === a.length || table[i + 1][j] >= table[i][j + 1])) ops.push(["-", b[i++]]);
      else ops.push(["+", a[j++]]);
    }
  }
  ops.push(...before.slice(endB).map((text) => [" ", text]));
  return ops;
}

function lines(text) {
  if (text === null || text === undefined || text === "") return [];
  return text.replace(/\n$/, "").split("\n");
}

// `root`: the project folder, left out of the path shown.
export function renderDiff(item, root = "") {
  const ops = lineOps(lines(item.oldText), lines(item.newText));
  const figure = document.createElement("figure");
  figure.className = "diff";
  const caption = document.createElement("figcaption");
  const added = ops.filter(([op]) => op === "+").length;
  const removed = ops.filter(([op]) => op === "-").length;
  const what = item.oldText === null || item.oldText === undefined ? "new file" : `+${added} −${removed}`;
  const path = root && item.path.startsWith(`${root}/`) ? item.path.slice(root.length + 1) : item.path;
  caption.textContent = `${path} (${what})`;
  const pre = document.createElement("pre");
  const near = ops.map((_, k) => ops.slice(Math.max(0, k - CONTEXT), k + CONTEXT + 1).some(([op]) => op !== " "));
  let elided = 0;
  const flushElided = () => {
    if (!elided) return;
    const gap = document.createElement("span");
    gap.className = "gap";
    gap.textContent = `⋯ ${elided} unchanged line${elided === 1 ? "" : "s"}\n`;
    pre.append(gap);
    elided = 0;
  };
  ops.forEach(([op, text], k) => {
    if (op === " " && !near[k]) {
      elided++;
      return;
    }
    flushElided();
    const line = document.createElement(op === "+" ? "ins" : op === "-" ? "del" : "span");
    line.textContent = `${op} ${text}\n`;
    pre.append(line);
  });
  flushElided();
  figure.append(caption, pre);
  return figure;
}
