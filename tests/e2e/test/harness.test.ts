import { existsSync, readFileSync } from "node:fs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  type FakeModel,
  isAlive,
  lastMessage,
  lastMessageText,
  lastUserText,
  makeScratchDir,
  messageText,
  type PiSession,
  type ScratchDir,
  startFakeModel,
  startPiSession,
  text,
  toolCall,
  whenLastMessageContains,
  whenToolResultContains,
  writeExtension,
} from "@piw/test-kit";

const TEST_TIMEOUT = 60_000;

let model: FakeModel;
let scratch: ScratchDir;
let session: PiSession | undefined;

beforeEach(async () => {
  model = await startFakeModel();
  scratch = makeScratchDir();
  session = undefined;
});

afterEach(async () => {
  await session?.close();
  await model.close();
  scratch.remove();
});

describe("the real pi against the scripted fake model", () => {
  it(
    "answers a plain prompt with the scripted text, and the model saw the prompt",
    async () => {
      model.reply(whenLastMessageContains("hello harness", text("Scripted hello back.")));
      const pi = await startPiSession({ model });
      session = pi;

      const settled = await pi.promptAndSettle("hello harness, are you there?");
      model.assertNoErrors();

      expect(settled).toEqual({ type: "agent_settled", aborted: false });
      const last = await pi.call<{ text: string | null }>({ type: "get_last_assistant_text" });
      expect(last.text).toBe("Scripted hello back.");
      expect(model.requests).toHaveLength(1);
      const [request] = model.requests;
      expect(request?.stream).toBe(true);
      expect(request && lastUserText(request)).toBe("hello harness, are you there?");

      const roles = (await pi.getMessages()).map((m) => m.role);
      expect(roles).toEqual(["system", "user", "assistant"]);

      // Isolation: Pi's session file lives in the temp agent dir, never under the real HOME.
      const state = await pi.getState();
      expect(state.sessionFile?.startsWith(pi.agentDir)).toBe(true);

      const pid = pi.pid as number;
      const root = pi.root;
      await pi.close();
      expect(isAlive(pid)).toBe(false);
      expect(existsSync(root)).toBe(false);
    },
    TEST_TIMEOUT,
  );

  it(
    "runs an extension tool the model calls, and the tool result reaches the next request",
    async () => {
      const extension = writeExtension(
        scratch,
        "echo-tool.ts",
        `import { Type } from "typebox";

export default function (pi) {
  pi.registerTool({
    name: "echo_tool",
    label: "Echo",
    description: "Echoes a value back",
    parameters: Type.Object({ action: Type.String(), value: Type.String() }),
    async execute(toolCallId, params) {
      return {
        content: [{ type: "text", text: "ECHO:" + params.value + " via " + toolCallId }],
        details: { action: params.action, value: params.value },
      };
    },
  });
}
`,
      );
      model.replyOnce(
        whenLastMessageContains(
          "call the tool",
          toolCall("echo_tool", { action: "echo", value: "banana-42" }, "call_echo_1"),
        ),
      );
      model.reply(whenToolResultContains("ECHO:banana-42", text("The tool said banana.")));
      const pi = await startPiSession({ model, extensions: [extension] });
      session = pi;

      await pi.promptAndSettle("please call the tool");
      model.assertNoErrors();

      const toolEnd = await pi.waitForEvent((e) => e.type === "tool_execution_end", { since: 0 });
      expect(toolEnd).toMatchObject({
        toolName: "echo_tool",
        toolCallId: "call_echo_1",
        isError: false,
        result: { details: { action: "echo", value: "banana-42" } },
      });
      expect(model.requests).toHaveLength(2);
      const [first, second] = model.requests;
      expect(first?.tools.map((t) => t.function.name)).toContain("echo_tool");
      const toolMessage = second && lastMessage(second);
      expect(toolMessage?.role).toBe("tool");
      expect(toolMessage?.tool_call_id).toBe("call_echo_1");
      expect(messageText(toolMessage)).toBe("ECHO:banana-42 via call_echo_1");
      const last = await pi.call<{ text: string | null }>({ type: "get_last_assistant_text" });
      expect(last.text).toBe("The tool said banana.");
    },
    TEST_TIMEOUT,
  );

  it(
    "starts a new model turn when an agent_settled handler sends a follow-up custom message",
    async () => {
      const extension = writeExtension(
        scratch,
        "settle-follow-up.ts",
        `let sent = false;

export default function (pi) {
  pi.on("agent_settled", (event) => {
    if (sent || event.aborted) return;
    sent = true;
    pi.sendMessage(
      { customType: "e2e-nudge", content: "NUDGE: workflow step finished", display: true, details: { step: 7 } },
      { triggerTurn: true, deliverAs: "followUp" },
    );
  });
}
`,
      );
      model.reply(whenLastMessageContains("start", text("Started.")));
      model.reply(whenLastMessageContains("NUDGE:", text("Nudge received.")));
      const pi = await startPiSession({ model, extensions: [extension] });
      session = pi;

      await pi.promptAndSettle("start");
      const second = await pi.waitForIdle();
      model.assertNoErrors();

      expect(second).toEqual({ type: "agent_settled", aborted: false });
      expect(model.requests).toHaveLength(2);
      const nudged = model.requests[1];
      expect(nudged && lastMessage(nudged)?.role).toBe("user");
      expect(nudged && lastMessageText(nudged)).toBe("NUDGE: workflow step finished");
      const custom = (await pi.getEntries()).find((e) => e.type === "custom_message");
      expect(custom).toMatchObject({
        customType: "e2e-nudge",
        content: "NUDGE: workflow step finished",
        details: { step: 7 },
      });
    },
    TEST_TIMEOUT,
  );

  it(
    "settles with aborted: true when aborted during a slow streamed reply",
    async () => {
      const settledLog = scratch.file("settled.jsonl");
      const extension = writeExtension(
        scratch,
        "settle-log.ts",
        `import { appendFileSync } from "node:fs";

export default function (pi) {
  pi.on("agent_settled", (event) => {
    appendFileSync(${JSON.stringify(settledLog)}, JSON.stringify({ aborted: event.aborted }) + "\\n");
  });
}
`,
      );
      // 400 deltas of 5 characters, 50 ms apart: about 20 s if nobody aborts.
      model.reply(text("slow ".repeat(400), { chunkSize: 5, delayMs: 50 }));
      const pi = await startPiSession({ model, extensions: [extension] });
      session = pi;

      await pi.prompt("write something long");
      await pi.waitForEvent((e) => e.type === "message_update");
      await pi.abort();
      const settled = await pi.waitForEvent((e) => e.type === "agent_settled", { timeoutMs: 10_000 });

      expect(settled).toEqual({ type: "agent_settled", aborted: true });
      expect(readFileSync(settledLog, "utf8").trim().split("\n")).toEqual([
        JSON.stringify({ aborted: true }),
      ]);
      const request = await model.waitForRequest(() => true);
      await expect.poll(() => request.outcome, { timeout: 5_000 }).toBe("client_closed");
      expect((await pi.getState()).isStreaming).toBe(false);
    },
    TEST_TIMEOUT,
  );

  it(
    "fails an unscripted request loudly and records it for the test",
    async () => {
      model.reply(whenLastMessageContains("expected", text("ok")));
      const pi = await startPiSession({ model });
      session = pi;

      await pi.promptAndSettle("something nobody scripted");

      expect(model.errors).toHaveLength(1);
      expect(model.errors[0]).toContain("something nobody scripted");
      expect(() => model.assertNoErrors()).toThrow(/unscripted request #1/);
      const assistantEnd = pi.events.findLast(
        (e) => e.type === "message_end" && (e.message as { role: string }).role === "assistant",
      );
      expect(JSON.stringify(assistantEnd)).toContain("no script matched");
    },
    TEST_TIMEOUT,
  );

  it(
    "reports pi exiting during startup with its exit code and stderr",
    async () => {
      const extension = writeExtension(
        scratch,
        "exit-at-start.ts",
        `export default function (pi) {
  pi.on("session_start", () => {
    process.stderr.write("e2e extension: exiting on purpose\\n");
    process.exit(3);
  });
}
`,
      );

      const starting = startPiSession({ model, extensions: [extension], startupTimeoutMs: 20_000 });

      await expect(starting).rejects.toThrow(/pi exited \(code 3[\s\S]*exiting on purpose/);
    },
    TEST_TIMEOUT,
  );

  it(
    "times out waiting for an event with the recent events in the message",
    async () => {
      const pi = await startPiSession({ model });
      session = pi;
      model.reply(text("quick"));
      await pi.promptAndSettle("anything");

      const waiting = pi.waitForEvent((e) => e.type === "never_emitted", { since: 0, timeoutMs: 300 });

      await expect(waiting).rejects.toThrow(/no matching pi event within 300 ms[\s\S]*agent_settled/);
    },
    TEST_TIMEOUT,
  );
});
