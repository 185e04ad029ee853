// An editor built on the official TypeScript ACP SDK (@agentclientprotocol/sdk), for
// tests/acp_agent/test_acp_typescript.py: it starts `codeloop acp`, runs the steps of the JSON
// script given as its argument, and prints one JSON line per thing it saw (every update, every
// permission request, each step's answer or error). It answers permission requests with
// allow_once, serves the script's buffers through fs/read_text_file, and cancels a prompt
// whose step says after which update.
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { client, methods, ndJsonStream } from "@agentclientprotocol/sdk";

const script = JSON.parse(process.argv[2]);
// A step with `cancelAfter` (an update kind) cancels its prompt once that update came.
let cancelOn = null;
const print = (record) => process.stdout.write(JSON.stringify(record) + "\n");

const agent = spawn(script.command[0], script.command.slice(1), {
  stdio: ["pipe", "pipe", "inherit"],
  cwd: script.cwd,
  env: process.env,
});
const stream = ndJsonStream(Writable.toWeb(agent.stdin), Readable.toWeb(agent.stdout));

const editor = client({ name: "codeloop-test-editor" })
  .onNotification(methods.client.session.update, async ({ params }) => {
    print({ kind: "update", value: params.update });
    if (cancelOn !== null && params.update.sessionUpdate === cancelOn.kind) {
      const cancel = cancelOn.cancel;
      cancelOn = null;
      await cancel();
    }
  })
  .onRequest(methods.client.session.requestPermission, async ({ params }) => {
    print({ kind: "ask", value: params });
    const allow = params.options.find((o) => o.kind === "allow_once");
    return { outcome: { outcome: "selected", optionId: allow.optionId } };
  })
  .onRequest(methods.client.fs.readTextFile, async ({ params }) => {
    print({ kind: "read", value: params.path });
    return { content: script.buffers[params.path] };
  });

await editor.connectWith(stream, async (ctx) => {
  let sessionId = script.sessionId ?? null;
  for (const step of script.steps) {
    const params = { ...step.params };
    if (params.sessionId === "$session") params.sessionId = sessionId;
    if (step.cancelAfter) {
      cancelOn = {
        kind: step.cancelAfter,
        cancel: () => ctx.notify(methods.agent.session.cancel, { sessionId: params.sessionId }),
      };
    }
    try {
      const answer = await ctx.request(step.method, params);
      if (step.method === methods.agent.session.new) sessionId = answer.sessionId;
      print({ kind: "answer", method: step.method, value: answer });
    } catch (error) {
      print({ kind: "error", method: step.method, code: error.code, message: String(error.message) });
    }
  }
});
agent.stdin.end();
await new Promise((resolve) => agent.on("exit", resolve));
