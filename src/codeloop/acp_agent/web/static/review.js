// A saved session for review: its timeline (messages, folds, compactions with what each
// summarized, checkpoints to rewind to) and its usage as bar charts by model, tool, sub-agent
// and file. The data comes from codeloop's ACP extension methods (_codeloop/timeline, /usage).

function el(tag, text = "", className = "") {
  const node = document.createElement(tag);
  if (text) node.textContent = text;
  if (className) node.className = className;
  return node;
}

function clock(iso) {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? "" : date.toLocaleString();
}

function plural(n, noun) {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}

function record(r) {
  return `${r.fate}: ${r.tool}${r.target ? " " + r.target : ""} (${r.tokens.toLocaleString()} tokens)${r.path ? " → " + r.path : ""}`;
}

function entryRow(entry) {
  const row = el("li", "", `entry ${entry.kind}`);
  row.append(el("time", clock(entry.time)));
  if (entry.kind === "message") {
    const calls = entry.calls.map((c) => `${c.tool} ${c.target}`.trim()).join(", ");
    const results = entry.results
      .map((r) => `${r.tool} ${r.target}`.trim() + (r.error ? " (failed)" : "") + ` → ${plural(r.lines, "line")}`)
      .join("; ");
    const text = [entry.text, calls && `→ ${calls}`, results && `results: ${results}`].filter(Boolean).join(" ");
    row.append(el("strong", entry.role), el("span", text || "(empty)"));
  } else if (entry.kind === "fold") {
    const details = el("details");
    details.append(el("summary", `folded ${plural(entry.results.length, "tool result")} to one-line stubs`));
    const list = el("ul");
    for (const r of entry.results) list.append(el("li", record(r)));
    details.append(list);
    row.append(el("strong", "folded"), details);
  } else if (entry.kind === "compaction") {
    const tokens = entry.tokensBefore != null && entry.tokensAfter != null
      ? `: ${entry.tokensBefore.toLocaleString()} → ${entry.tokensAfter.toLocaleString()} tokens` : "";
    const summarized = entry.summarized != null ? `summarized ${plural(entry.summarized, "message")}, ` : "";
    const box = el("div");
    box.append(el("p", `${entry.trigger}${tokens}; ${summarized}kept ${entry.kept} word for word`));
    if (entry.results.length) {
      box.append(el("p", `${plural(entry.results.length, "tool result")} it replaced:`));
      const list = el("ul");
      for (const r of entry.results) list.append(el("li", record(r)));
      box.append(list);
    }
    const summary = el("details");
    summary.append(el("summary", "Summary"), el("pre", entry.summary, "summary-text"));
    box.append(summary);
    row.append(el("strong", "compaction"), box);
  } else {
    row.append(el("strong", "rewritten"), el("span", `the history was rewritten (${entry.trigger})`));
  }
  return row;
}

function checkpointRow(cp) {
  const row = el("li", "", "entry checkpoint");
  row.append(el("time", clock(cp.time)), el("strong", `checkpoint ${cp.number}`));
  const prompt = cp.prompt && cp.kind === "turn" ? ` "${cp.prompt}"` : "";
  const box = el("div");
  box.append(el("span", `before ${cp.label || "a write"}${prompt}. Rewind to it: `), el("code", cp.rewind));
  row.append(box);
  return row;
}

export function renderTimeline(data) {
  const section = el("section", "", "timeline");
  section.setAttribute("aria-label", "Timeline");
  section.append(el("h3", "Timeline"));
  const compactions = data.entries.filter((e) => e.kind === "compaction").length;
  const messages = data.entries.filter((e) => e.kind === "message").length;
  section.append(
    el("p", `${plural(messages, "message")}, ${plural(compactions, "compaction")}, ${plural(data.checkpoints.length, "checkpoint")}`),
  );
  for (const warning of data.warnings) section.append(el("p", `warning: ${warning}`, "warning"));
  const rows = [
    ...data.entries.map((e) => [e.time, entryRow(e)]),
    ...data.checkpoints.map((cp) => [cp.time, checkpointRow(cp)]),
  ].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const list = el("ol", "", "entries");
  list.append(...rows.map(([, row]) => row));
  section.append(list);
  if (data.agents.length) {
    section.append(el("h4", plural(data.agents.length, "sub-agent")));
    const agents = el("ul");
    for (const a of data.agents) agents.append(el("li", `${a.agentType || "agent"}: ${a.description || a.agentId} (${plural(a.messages, "message")})`));
    section.append(agents);
  }
  return section;
}

const CHARTS = [
  ["by_model", "model", "Usage by model"],
  ["by_tool", "tool", "Usage by tool"],
  ["by_subagent", "description", "Usage by sub-agent"],
  ["by_file", "file", "Usage by file"],
];

function tokens(row) {
  return row.input_tokens + row.cache_read_input_tokens + row.cache_creation_input_tokens + row.output_tokens;
}

function chart(rows, key, title) {
  const figure = el("figure", "", "chart");
  figure.append(el("figcaption", title));
  if (!rows.length) {
    figure.append(el("p", "none", "muted"));
    return figure;
  }
  const byCost = rows.some((r) => r.cost_usd > 0);
  const measure = (r) => (byCost ? r.cost_usd : tokens(r));
  const top = Math.max(...rows.map(measure), 1e-12);
  const list = el("ul");
  for (const row of rows) {
    const item = el("li");
    const bar = el("span", "", "bar");
    bar.setAttribute("aria-hidden", "true");
    bar.style.width = `${(100 * measure(row)) / top}%`;
    item.append(
      el("span", String(row[key] || row.agent || "?"), "label"),
      el("span", "", "track"),
      el("span", `${tokens(row).toLocaleString()} tokens · $${row.cost_usd.toFixed(4)}`, "value"),
    );
    item.children[1].append(bar);
    list.append(item);
  }
  figure.append(list);
  return figure;
}

export function renderUsage(data) {
  const section = el("section", "", "usage");
  section.setAttribute("aria-label", "Usage");
  section.append(el("h3", "Usage"));
  const total = data.total;
  section.append(
    el("p", `${plural(data.requests, "request")}, ${tokens(total).toLocaleString()} tokens, $${total.cost_usd.toFixed(4)}; cache hit rate ${(100 * data.cache_hit_rate).toFixed(0)}%`),
  );
  for (const [field, key, title] of CHARTS) section.append(chart(data[field] || [], key, title));
  return section;
}
