// The page: one ACP session at a time over the WebSocket at /acp — the prompt, the streamed
// answer, tool calls, permission requests, the pickers, the plan, the sessions list, and a
// saved session's review (timeline and usage).

import { AcpClient, RpcError } from "./acp.js";
import { renderDiff } from "./diff.js";
import { renderMarkdown } from "./markdown.js";
import { renderTimeline, renderUsage } from "./review.js";

const $ = (id) => document.getElementById(id);
const ui = {
  status: $("status"), mode: $("mode"), model: $("model"), newSession: $("new-session"),
  form: $("prompt-form"), prompt: $("prompt"), send: $("send"), stop: $("stop"), usage: $("usage"), hint: $("hint"),
  permission: $("permission"), transcript: $("transcript"), plan: $("plan"), planEmpty: $("plan-empty"),
  sessions: $("sessions"), commands: $("commands"), review: $("review"),
};
// How the standard permission options are named on their buttons (the rule an "always"
// keeps is said beside it); anything else (a question's choices) keeps its own name.
const OPTION_LABELS = {
  allow_once: "Allow once", allow_always: "Allow always", reject_once: "Reject", reject_always: "Never allow",
};

const state = {
  sessionId: null, cwd: null, busy: false, open: null, toolCalls: new Map(), asking: null, commands: [],
  askingId: null, // the tool call the permission dialog asks about
  ready: null, // a promise of the open session's id (a prompt typed before it waits for it)
  queued: false, // Enter was pressed while an answer ran: the box's text goes next
  listed: new Set(), // the sessions the list shows
  opening: null,
};

// The next session to open; prompts sent meanwhile wait for it (one promise until it opens).
function expectSession() {
  if (!state.opening) state.ready = new Promise((resolve) => (state.opening = resolve));
}
expectSession();

function el(tag, text = "", className = "") {
  const node = document.createElement(tag);
  if (text) node.textContent = text;
  if (className) node.className = className;
  return node;
}

// From 900px the transcript scrolls on its own (style.css); narrower, the page does.
const wide = matchMedia("(min-width: 900px)");

// Followed to its end while the reader is there; left alone when they scrolled up to read.
function scrolled(action) {
  const box = wide.matches ? ui.transcript : document.scrollingElement;
  const atEnd = box.scrollHeight - box.scrollTop - box.clientHeight < 40;
  action();
  if (atEnd) box.scrollTop = box.scrollHeight;
}

function note(text, className = "note") {
  const line = el("p", text, className);
  if (className === "error") line.setAttribute("role", "alert");
  scrolled(() => ui.transcript.append(line));
  state.open = null;
}

// --- the transcript -------------------------------------------------------------------------

// The message being written: chunks of one kind and id go into one block, whose markdown is
// drawn again once per frame while it grows.
function chunk(kind, messageId, text) {
  let open = state.open;
  if (!open || open.kind !== kind || (messageId && open.id && open.id !== messageId)) {
    const root = kind === "thought" ? el("details", "", "thought") : el("div", "", `message ${kind}`);
    const body = el("div", "", "body");
    if (kind === "thought") root.append(el("summary", "Thinking"));
    root.append(body);
    open = { kind, id: messageId, text: "", body, scheduled: false };
    state.open = open;
    scrolled(() => ui.transcript.append(root));
  }
  open.text += text;
  if (open.scheduled) return;
  open.scheduled = true;
  requestAnimationFrame(() => draw(open));
}

function draw(open) {
  open.scheduled = false;
  scrolled(() => {
    if (open.kind === "agent") open.body.replaceChildren(...renderMarkdown(open.text));
    else open.body.textContent = open.text;
  });
}

// A whole message at once (the user's): drawn now, and the next chunk starts another.
function said(kind, text) {
  state.open = null;
  chunk(kind, null, text);
  draw(state.open);
  state.open = null;
}

function contentText(item) {
  if (item.type === "content" && item.content?.type === "text") return item.content.text;
  if (item.type === "terminal") return `(runs in terminal ${item.terminalId})`;
  return "";
}

function toolCall(update) {
  const root = el("div", "", `tool kind-${update.kind || "other"}`);
  const details = el("details");
  const summary = el("summary");
  const status = el("span", "", "tool-status");
  const title = el("span", "", "tool-title");
  summary.append(status, title);
  const output = el("pre", "", "tool-output");
  details.append(summary, output);
  const diffs = el("div", "", "diffs");
  root.append(details, diffs);
  const call = { root, status, title, output, diffs, data: {} };
  state.toolCalls.set(update.toolCallId, call);
  state.open = null;
  scrolled(() => ui.transcript.append(root));
  return call;
}

function updateToolCall(update) {
  const call = state.toolCalls.get(update.toolCallId) || toolCall(update);
  Object.assign(call.data, Object.fromEntries(Object.entries(update).filter(([, v]) => v !== null && v !== undefined)));
  const data = call.data;
  call.root.dataset.status = data.status || "pending";
  call.status.textContent = { pending: "○", in_progress: "◐", completed: "●", failed: "✕" }[data.status || "pending"];
  call.status.setAttribute("role", "img");
  call.status.setAttribute("aria-label", data.status || "pending");
  call.title.textContent = data.title || "tool";
  if (update.content) {
    const items = update.content;
    const text = items.map(contentText).filter(Boolean).join("\n");
    call.output.textContent = text || (typeof data.rawOutput === "string" ? data.rawOutput : "");
    const diffs = items.filter((i) => i.type === "diff");
    if (diffs.length) call.diffs.replaceChildren(...diffs.map((d) => renderDiff(d, state.cwd)));
  } else if (!call.output.textContent && typeof data.rawOutput === "string") {
    call.output.textContent = data.rawOutput;
  }
  if (!call.output.textContent && data.rawInput) call.output.textContent = JSON.stringify(data.rawInput, null, 2);
  // Answered elsewhere (another browser on the session): the call runs or ended, so the
  // question this page still shows is moot.
  if (state.asking && state.askingId === update.toolCallId && update.status && update.status !== "pending") {
    state.asking();
  }
}

function showPlan(entries) {
  ui.plan.replaceChildren(
    ...entries.map((e) => {
      const item = el("li", e.content, `plan-${e.status}`);
      item.dataset.status = e.status;
      return item;
    }),
  );
  ui.planEmpty.hidden = entries.length > 0;
}

function showConfig(options) {
  for (const option of options || []) {
    const select = option.id === "mode" ? ui.mode : option.id === "model" ? ui.model : null;
    if (!select || option.type !== "select") continue;
    const choices = (option.options || []).flatMap((o) => (o.options ? o.options : [o]));
    select.replaceChildren(
      ...choices.map((o) => {
        const choice = el("option", o.name || o.value);
        choice.value = o.value;
        if (o.description) choice.title = o.description;
        return choice;
      }),
    );
    select.value = option.currentValue;
    select.disabled = false;
  }
}

function showModes(modes) {
  if (!modes || ui.mode.options.length) return;
  showConfig([{ id: "mode", type: "select", currentValue: modes.currentModeId, options: modes.availableModes.map((m) => ({ value: m.id, name: m.name, description: m.description })) }]);
}

function showCommands(commands) {
  state.commands = commands;
  ui.commands.replaceChildren(...commands.map((c) => el("li", `/${c.name} — ${c.description}`)));
}

function onUpdate(update) {
  switch (update.sessionUpdate) {
    case "user_message_chunk":
      if (update.content?.type === "text") said("user", update.content.text);
      break;
    case "agent_message_chunk":
      if (update.content?.type === "text") chunk("agent", update.messageId, update.content.text);
      break;
    case "agent_thought_chunk":
      if (update.content?.type === "text") chunk("thought", update.messageId, update.content.text);
      break;
    case "tool_call":
    case "tool_call_update":
      updateToolCall(update);
      break;
    case "plan":
      showPlan(update.entries || []);
      break;
    case "available_commands_update":
      showCommands(update.availableCommands || []);
      break;
    case "current_mode_update":
      ui.mode.value = update.currentModeId;
      break;
    case "config_option_update":
      showConfig(update.configOptions);
      break;
    case "usage_update": {
      const cost = update.cost ? ` · $${update.cost.amount.toFixed(4)}` : "";
      ui.usage.textContent = `context ${update.used.toLocaleString()} / ${update.size.toLocaleString()} tokens${cost}`;
      break;
    }
    default:
      break;
  }
}

// --- permission requests --------------------------------------------------------------------

function ask(params) {
  return new Promise((resolve) => {
    const call = params.toolCall;
    if (state.toolCalls.has(call.toolCallId) || call.title) updateToolCall(call);
    const card = el("section", "", "card");
    card.setAttribute("role", "dialog");
    card.setAttribute("aria-labelledby", "permission-title");
    card.append(el("h2", `Allow ${call.title || "this tool call"}?`));
    card.firstChild.id = "permission-title";
    const shown = (call.content || []).filter((i) => i.type === "diff").map((d) => renderDiff(d, state.cwd));
    const text = (call.content || []).map(contentText).filter(Boolean).join("\n");
    if (text) shown.push(el("pre", text, "ask-text"));
    else if (!shown.length && call.rawInput) shown.push(el("pre", call.rawInput.command || JSON.stringify(call.rawInput, null, 2), "ask-text"));
    card.append(...shown);
    const message = el("input");
    message.type = "text";
    message.id = "reject-message";
    message.placeholder = "Why not, or what to do instead (sent with Reject)";
    const messageLabel = el("label", "Message with a rejection (optional)");
    messageLabel.htmlFor = "reject-message";
    const buttons = el("div", "", "choices");
    const done = (outcome) => {
      state.asking = null;
      ui.permission.hidden = true;
      ui.permission.replaceChildren();
      resolve({ outcome });
      ui.prompt.focus();
    };
    const rejecting = params.options.some((o) => o.optionId === "reject_once");
    for (const option of params.options) {
      const button = el("button", OPTION_LABELS[option.optionId] || option.name, `choice ${option.kind}`);
      button.type = "button";
      const rule = option.name.match(/\((.*)\)$/);
      if (OPTION_LABELS[option.optionId] && rule) {
        // Named by its label alone (what a screen reader, or a test by role, looks for);
        // the rule it keeps shows beside it and is its description.
        button.setAttribute("aria-label", OPTION_LABELS[option.optionId]);
        const said = el("span", rule[1], "rule");
        said.id = `rule-${option.optionId}`;
        button.setAttribute("aria-describedby", said.id);
        button.append(" ", said);
      }
      button.addEventListener("click", () => {
        const words = message.value.trim();
        const meta = option.kind.startsWith("reject") && words ? { _meta: { message: words } } : {};
        done({ outcome: "selected", optionId: option.optionId, ...meta });
      });
      buttons.append(button);
    }
    card.append(buttons);
    if (rejecting) {
      message.addEventListener("keydown", (event) => {
        if (event.key === "Enter") {
          event.preventDefault();
          buttons.querySelector(".reject_once")?.click();
        }
      });
      card.append(messageLabel, message);
    }
    state.asking = () => done({ outcome: "cancelled" });
    state.askingId = call.toolCallId;
    ui.permission.replaceChildren(card);
    ui.permission.hidden = false;
    buttons.querySelector("button")?.focus();
  });
}

// --- sessions --------------------------------------------------------------------------------

let client;

function setBusy(busy) {
  state.busy = busy;
  ui.send.disabled = busy;
  ui.stop.disabled = !busy;
}

function reset() {
  ui.transcript.replaceChildren();
  state.toolCalls.clear();
  state.open = null;
  showPlan([]);
  ui.usage.textContent = "";
  ui.review.hidden = true;
  ui.review.replaceChildren();
}

function opened(sessionId, answer) {
  state.sessionId = sessionId;
  state.opening?.(sessionId);
  state.opening = null;
  history.replaceState(null, "", `#session=${sessionId}`);
  ui.mode.replaceChildren();
  showConfig(answer.configOptions);
  showModes(answer.modes);
}

// Opening a session (new or loaded): the latest one asked for wins, whichever answers first.
let openings = 0;

async function newSession() {
  const mine = ++openings;
  reset();
  expectSession();
  const answer = await client.request("session/new", { cwd: state.cwd, mcpServers: [] });
  if (mine !== openings) return;
  opened(answer.sessionId, answer);
  await listSessions();
}

async function loadSession(sessionId, review) {
  const mine = ++openings;
  reset();
  expectSession();
  state.sessionId = sessionId; // its replay comes before the answer
  const answer = await client.request("session/load", { sessionId, cwd: state.cwd, mcpServers: [] });
  if (mine !== openings) return;
  opened(sessionId, answer);
  if (review) await showReview(sessionId);
}

async function showReview(sessionId) {
  const params = { sessionId, cwd: state.cwd };
  const [timeline, usage] = await Promise.all([
    client.request("_codeloop/timeline", params),
    client.request("_codeloop/usage", params),
  ]);
  ui.review.replaceChildren(el("h2", "Review"), renderTimeline(timeline), renderUsage(usage));
  ui.review.hidden = false;
}

// What the list last drew: drawing it again unchanged could swallow a click under way (a
// mouse press on one link and its release on the link that replaced it click neither).
let listDrawn = "";

async function listSessions() {
  const answer = await client.request("session/list", {});
  state.listed = new Set(answer.sessions.map((s) => s.sessionId));
  const current = state.listed.has(state.sessionId) ? state.sessionId : null;
  const drawn = JSON.stringify([current, answer.sessions.map((s) => [s.sessionId, s.title, s.updatedAt])]);
  if (drawn === listDrawn) return;
  listDrawn = drawn;
  ui.sessions.replaceChildren(
    ...answer.sessions.map((s) => {
      const link = el("a", s.title || s.sessionId.slice(0, 8));
      link.href = `#session=${s.sessionId}`;
      link.addEventListener("click", (event) => {
        event.preventDefault();
        guard(loadSession(s.sessionId, true));
      });
      const item = el("li");
      if (s.sessionId === state.sessionId) item.setAttribute("aria-current", "true");
      item.append(link, el("span", s.updatedAt ? new Date(s.updatedAt).toLocaleString() : "", "muted"));
      return item;
    }),
  );
}

function guard(promise) {
  promise.catch((error) => note(error.message, "error"));
}

async function connected() {
  const hello = await client.request("initialize", {
    protocolVersion: 1,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
    clientInfo: { name: "codeloop-web", title: "codeloop web", version: "1" },
  });
  state.cwd = hello._meta?.cwd; // the folder codeloop serve serves
  await listSessions();
  const wanted = state.sessionId || new URLSearchParams(location.hash.slice(1)).get("session");
  if (wanted) await loadSession(wanted, false);
  else await newSession();
}

async function sendPrompt() {
  const text = ui.prompt.value;
  if (!text.trim()) return;
  if (state.busy) {
    state.queued = true; // sent as soon as the answer running now ends
    ui.hint.textContent = "Sent when this answer ends (Escape drops it).";
    return;
  }
  ui.prompt.value = "";
  setBusy(true);
  try {
    const sessionId = await state.ready;
    said("user", text);
    const answer = await client.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] });
    if (answer.stopReason === "cancelled") note("Stopped.");
    else if (answer.stopReason !== "end_turn") note(`Ended: ${answer.stopReason.replaceAll("_", " ")}.`);
  } catch (error) {
    note(error.message, "error");
  } finally {
    state.open = null;
    setBusy(false);
  }
  // A new session is saved with its first answer: the list gets it (reading every session's
  // transcript, so not after every answer).
  if (!state.listed.has(state.sessionId)) guard(listSessions());
  if (state.queued) {
    state.queued = false;
    ui.hint.textContent = "";
    sendPrompt();
  }
}

function cancel() {
  state.queued = false;
  ui.hint.textContent = "";
  if (state.asking) state.asking();
  if (state.busy) client.notify("session/cancel", { sessionId: state.sessionId });
}

// --- wiring ----------------------------------------------------------------------------------

function socketUrl() {
  const query = new URLSearchParams(location.search);
  const token = query.get("token");
  if (token) {
    query.delete("token"); // the cookie carries it from now on: keep it out of the address bar
    const rest = query.toString();
    history.replaceState(null, "", location.pathname + (rest ? `?${rest}` : "") + location.hash);
  }
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  return `${scheme}//${location.host}/acp${token ? `?token=${encodeURIComponent(token)}` : ""}`;
}

ui.form.addEventListener("submit", (event) => {
  event.preventDefault();
  sendPrompt();
});
ui.prompt.addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    sendPrompt();
  }
});
ui.stop.addEventListener("click", cancel);
document.addEventListener("keydown", (event) => {
  if (event.key === "Escape") cancel();
});
ui.newSession.addEventListener("click", () => guard(newSession()));
for (const select of [ui.mode, ui.model]) {
  select.addEventListener("change", () => {
    const configId = select === ui.mode ? "mode" : "model";
    guard(
      client
        .request("session/set_config_option", { sessionId: state.sessionId, configId, value: select.value })
        .then((answer) => showConfig(answer.configOptions)),
    );
  });
}

function showStatus(text, kind) {
  ui.status.textContent = text;
  ui.status.dataset.state = kind;
}

client = new AcpClient(socketUrl(), {
  // "connected" once the session is open again (its transcript replayed), not before.
  onOpen: () => {
    showStatus("opening the session…", "busy");
    guard(connected().then(() => showStatus("connected", "ok")));
  },
  onStatus: (text, kind) => {
    showStatus(text, kind);
    if (kind === "down") setBusy(false);
  },
  onNotification: (method, params) => {
    if (method === "session/update" && params.sessionId === state.sessionId) onUpdate(params.update);
  },
  onRequest: (method, params) => {
    if (method === "session/request_permission") return ask(params);
    throw new RpcError({ code: -32601, message: `Method not found: ${method}` });
  },
});
setBusy(false);
