// The TypeScript Claude Agent SDK driving codeloop (pathToClaudeCodeExecutable) through one
// scenario, named by argv[2]. Every SDK message is printed as a JSON line, with what the
// callbacks saw, for tests/sdk/test_typescript_sdk.py to check.
import { createSdkMcpServer, query, tool } from "@anthropic-ai/claude-agent-sdk";
import { z } from "zod";

const scenario = process.argv[2];
const work = process.env.CODELOOP_TEST_WORK;
const base = {
  pathToClaudeCodeExecutable: process.env.CODELOOP_TEST_BIN,
  cwd: work,
  env: { ...process.env },
  stderr: (text) => process.stderr.write(text),
};
const print = (kind, value) => process.stdout.write(JSON.stringify({ kind, value }) + "\n");

async function drain(q) {
  for await (const message of q) print("message", message);
}

// A prompt stream that stays open until `done` resolves, as multi-turn SDK code writes it.
function prompts(texts, results) {
  return (async function* () {
    for (const text of texts) {
      yield { type: "user", message: { role: "user", content: text }, parent_tool_use_id: null };
      await results.next();
    }
  })();
}

function resultGate() {
  let resolvers = [];
  let pending = 0;
  return {
    seen() {
      if (resolvers.length) resolvers.shift()();
      else pending += 1;
    },
    next() {
      if (pending) {
        pending -= 1;
        return Promise.resolve();
      }
      return new Promise((resolve) => resolvers.push(resolve));
    },
  };
}

async function conversation(texts, options, onMessage = async () => {}) {
  const gate = resultGate();
  const q = query({ prompt: prompts(texts, gate), options });
  for await (const message of q) {
    print("message", message);
    await onMessage(message, q);
    if (message.type === "result") gate.seen();
  }
}

const scenarios = {
  async query() {
    await drain(query({ prompt: "What is the capital of France?", options: base }));
  },
  async multiturn() {
    await conversation(["Remember the number 7.", "Which number did I give you?"], base);
  },
  async deny() {
    const canUseTool = async (name, input) => {
      print("asked", { name, input });
      return { behavior: "deny", message: "No writing today." };
    };
    await conversation(["Write a note."], { ...base, canUseTool });
  },
  async hook() {
    const guard = async (input, toolUseId) => {
      print("hook", { tool: input.tool_name, toolUseId });
      return {
        hookSpecificOutput: {
          hookEventName: "PreToolUse",
          permissionDecision: "deny",
          permissionDecisionReason: "touching files is blocked",
        },
      };
    };
    const hooks = { PreToolUse: [{ matcher: "Bash", hooks: [guard] }] };
    await conversation(["Touch the marker."], { ...base, hooks, allowedTools: ["Bash"] });
  },
  async mcp() {
    const add = tool("add", "Add two numbers", { a: z.number(), b: z.number() }, async (args) => {
      print("called", args);
      return { content: [{ type: "text", text: `SUM=${args.a + args.b}` }] };
    });
    const calc = createSdkMcpServer({ name: "calc", version: "1.0.0", tools: [add] });
    const options = { ...base, mcpServers: { calc }, allowedTools: ["mcp__calc__add"] };
    await conversation(["What is 40 + 2?"], options);
  },
  async interrupt() {
    let interrupted = false;
    const options = { ...base, includePartialMessages: true };
    await conversation(["Count slowly.", "Are you there?"], options, async (message, q) => {
      const delta = message.type === "stream_event" && message.event.type === "content_block_delta";
      if (delta && !interrupted) {
        interrupted = true;
        await q.interrupt();
      }
    });
  },
  async control() {
    let results = 0;
    const texts = ["Write a.txt", "Write a.txt again", "Who are you?"];
    await conversation(texts, base, async (message, q) => {
      if (message.type !== "result") return;
      results += 1;
      if (results === 1) await q.setPermissionMode("acceptEdits");
      if (results === 2) await q.setModel("haiku");
    });
  },
  async rewind() {
    const options = {
      ...base,
      enableFileCheckpointing: true,
      permissionMode: "acceptEdits",
      extraArgs: { "replay-user-messages": null },
    };
    const prompts = [];
    let results = 0;
    const texts = ["Write one.", "Write two.", "Are you there?"];
    await conversation(texts, options, async (message, q) => {
      if (message.type === "user" && texts.includes(message.message.content)) {
        prompts.push(message.uuid);
      }
      if (message.type !== "result" || ++results !== 2) return;
      print("rewound", { bogus: await q.rewindFiles("not-a-message", { dryRun: true }) });
      print("rewound", { dry: await q.rewindFiles(prompts[0], { dryRun: true }) });
      print("rewound", { real: await q.rewindFiles(prompts[0]) });
    });
  },
  async structured() {
    const schema = {
      type: "object",
      properties: { city: { type: "string" }, population: { type: "integer" } },
      required: ["city", "population"],
    };
    const outputFormat = { type: "json_schema", schema };
    await drain(query({ prompt: "Biggest city of France?", options: { ...base, outputFormat } }));
  },
};

await scenarios[scenario]();
