import { randomUUID } from "node:crypto";
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { MessageRecord, RunView } from "@piw/protocol";
import { isTerminalStatus } from "@piw/protocol";
import { renderFooterStatus, renderWidgetLines } from "@piw/viewer";
import { HostLink, type HostLinkOptions, savedOrThrow, WorkflowError } from "./host-link.js";

/** The custom message type of everything piw puts into a Pi session. */
export const PIW_MESSAGE_TYPE = "piw";
const WIDGET_KEY = "piw";

/** What piw writes into a custom message's `details`: the host outbox ID proves delivery later. */
export interface PiwMessageDetails {
  piwMessageId: string;
  runId: string;
  kind: MessageRecord["kind"];
  path: string | null;
}

function piwDetails(value: unknown): PiwMessageDetails | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const details = value as Partial<PiwMessageDetails>;
  return typeof details.piwMessageId === "string" && typeof details.runId === "string"
    ? (details as PiwMessageDetails)
    : undefined;
}

export type SessionBridgeOptions = Omit<HostLinkOptions, "onView" | "onReconnect"> & {
  /** Called with every newer view of a run of this session (the gate dialogs watch them). */
  onOwnView?: (view: RunView, ctx: ExtensionContext) => void;
};

interface OpenTurn {
  requestId: string;
  runId: string;
}

/** How an agent run ended, from the last assistant message Pi reports at `agent_end`. */
function turnEndReason(messages: readonly unknown[]): "completed" | "aborted" | "error" {
  for (let i = messages.length - 1; i >= 0; i -= 1) {
    const message = messages[i] as { role?: unknown; stopReason?: unknown } | undefined;
    if (message?.role !== "assistant") continue;
    if (message.stopReason === "aborted") return "aborted";
    if (message.stopReason === "error") return "error";
    return "completed";
  }
  return "completed";
}

/**
 * Everything that ties one Pi session to the host: turn reports (seed 000), activation at idle
 * boundaries and outbox delivery (seed 003), and the widget. The host decides; this only reports
 * what Pi did and delivers what the host queued.
 */
export class SessionBridge {
  readonly host: HostLink;
  private ctx: ExtensionContext | undefined;
  private idle = true;
  /** The piw step prompt that is starting the next agent run, seen at `before_agent_start`. */
  private startingMessage: string | undefined;
  private turn: OpenTurn | undefined;
  /** Settles once the current turn's ownership is known; `submit` waits for it. */
  private turnKnown: Promise<void> = Promise.resolve();
  /** Settles once the last `agent_end` report is done. */
  private ending: Promise<void> = Promise.resolve();
  /** IDs this process handed to Pi; the session entries prove the rest. */
  private readonly sent = new Set<string>();
  private delivering: Promise<void> | undefined;
  private deliverAgain = false;
  private readonly views = new Map<string, RunView>();
  private shownRunId: string | undefined;
  /** What the widget and footer show now, so an unchanged view draws nothing. */
  private shown = { widget: "", status: "" };

  private readonly onOwnView: SessionBridgeOptions["onOwnView"];

  constructor(
    private readonly pi: ExtensionAPI,
    { onOwnView, ...options }: SessionBridgeOptions,
  ) {
    this.onOwnView = onOwnView;
    this.host = new HostLink({
      ...options,
      onView: (view) => this.onView(view),
      onReconnect: () => void this.afterReconnect(),
    });
  }

  get sessionId(): string {
    const id = this.ctx?.sessionManager.getSessionId();
    if (!id) throw new WorkflowError("The Pi session is not ready yet; try again in a moment.");
    return id;
  }

  /** Keep the freshest context: UI calls and session reads go through it. */
  remember(ctx: ExtensionContext): void {
    this.ctx = ctx;
  }

  isIdle(): boolean {
    return this.idle && (this.ctx?.isIdle() ?? true);
  }

  /** `session_start`: nothing is running, so earlier turns are unproved, queued runs may start. */
  async sessionStarted(ctx: ExtensionContext): Promise<void> {
    this.remember(ctx);
    this.idle = ctx.isIdle();
    const sessionId = this.sessionId;
    // A new, resumed or forked session shows its own runs only.
    const previous = this.shownRunId === undefined ? undefined : this.views.get(this.shownRunId)?.origin;
    if (previous?.kind === "pi" && previous.sessionId !== sessionId) {
      this.views.clear();
      this.shownRunId = undefined;
      this.shown = { widget: "", status: "" };
      ctx.ui.setWidget(WIDGET_KEY, undefined);
      ctx.ui.setStatus(WIDGET_KEY, undefined);
    }
    await this.host.call("turns.settle", { sessionId });
    this.host.watchAll();
    const [latest] = await this.host.call("runs.list", { sessionId, limit: 1 });
    if (latest) {
      this.shownRunId = latest.runId;
      const view = await this.host.call("runs.get", { runId: latest.runId });
      if (view) this.onView(view);
    }
    if (this.isIdle()) await this.settled();
  }

  /** `before_agent_start`: remember which piw step prompt (if any) starts this agent run. */
  agentStarting(message: { customType?: string; details?: unknown } | undefined): void {
    const details = message?.customType === PIW_MESSAGE_TYPE ? piwDetails(message.details) : undefined;
    this.startingMessage = details?.kind === "step_prompt" ? details.piwMessageId : undefined;
  }

  /** `agent_start`: propose the step prompt that started this run; the host says who owns the turn. */
  agentStarted(): void {
    this.idle = false;
    const messageId = this.startingMessage;
    this.startingMessage = undefined;
    this.turn = undefined;
    if (messageId === undefined) {
      this.turnKnown = Promise.resolve();
      return;
    }
    const requestId = `req:${randomUUID()}`;
    this.turnKnown = this.host
      .call("turns.start", { sessionId: this.sessionId, requestId, messageId })
      .then((result) => {
        const ownership = savedOrThrow(result, "turn start");
        if (ownership.owner === "workflow" && ownership.turn.runId !== null) {
          this.turn = { requestId, runId: ownership.turn.runId };
        }
      })
      .catch(() => {
        // Unproved: this turn is not attached; the host settles it as lost at the next boundary.
      });
  }

  /** `agent_end`: end exactly the turn the host accepted. */
  agentEnded(messages: readonly unknown[]): Promise<void> {
    this.ending = this.endTurn(messages);
    return this.ending;
  }

  private async endTurn(messages: readonly unknown[]): Promise<void> {
    await this.turnKnown;
    const turn = this.turn;
    this.turn = undefined;
    if (!turn) return;
    try {
      await this.host.call("turns.end", {
        sessionId: this.sessionId,
        requestId: turn.requestId,
        reason: turnEndReason(messages),
      });
    } catch {
      // The host settles the open turn as lost when it next sees this session idle.
    }
  }

  /** `agent_settled` (and any other idle boundary): activate queued runs, then deliver messages. */
  async settled(): Promise<void> {
    this.idle = true;
    const sessionId = this.sessionId;
    // The turn's end must reach the host before anything still open is settled as lost.
    await this.ending;
    try {
      await this.host.call("turns.settle", { sessionId });
      const { activated } = await this.host.call("session.settled", { sessionId });
      for (const runId of activated) this.follow(runId);
    } catch (error) {
      this.showProblem(error);
      return;
    }
    await this.deliver();
  }

  /** Wait until the current agent run's ownership is known (a submit right after agent_start). */
  whenTurnKnown(): Promise<void> {
    return this.turnKnown;
  }

  /** Show and follow a run of this session (after a start, answer or restart). */
  follow(runId: string): void {
    this.shownRunId = runId;
    this.host.watchAll();
  }

  /**
   * Deliver the session's queued messages while Pi is idle, oldest first. At most one of them starts
   * a turn; the rest wait for the next idle boundary. A message already in the session (a crash
   * between append and acknowledgement) is acknowledged, never sent twice.
   */
  deliver(): Promise<void> {
    if (this.delivering) {
      this.deliverAgain = true;
      return this.delivering;
    }
    this.delivering = (async () => {
      try {
        do {
          this.deliverAgain = false;
          await this.deliverOnce();
        } while (this.deliverAgain && this.isIdle());
      } catch (error) {
        this.showProblem(error);
      } finally {
        this.delivering = undefined;
      }
    })();
    return this.delivering;
  }

  private async deliverOnce(): Promise<void> {
    const sessionId = this.sessionId;
    while (this.isIdle()) {
      const claimed = savedOrThrow(
        await this.host.call("messages.claim", { sessionId, limit: 1 }),
        "delivery",
      );
      const message = claimed[0];
      if (!message) return;
      const already = this.sent.has(message.messageId) || this.inSession(message.messageId);
      if (!already) {
        this.sent.add(message.messageId);
        const details: PiwMessageDetails = {
          piwMessageId: message.messageId,
          runId: message.runId,
          kind: message.kind,
          path: message.path,
        };
        if (message.triggerTurn) this.idle = false;
        this.pi.sendMessage(
          { customType: PIW_MESSAGE_TYPE, content: message.body, display: true, details },
          message.triggerTurn ? { triggerTurn: true, deliverAs: "followUp" } : {},
        );
      }
      await this.host.call("messages.delivered", { messageId: message.messageId });
      if (message.triggerTurn && !already) return;
    }
  }

  /** Whether the Pi session already holds the piw message with this outbox ID. */
  private inSession(messageId: string): boolean {
    const entries = this.ctx?.sessionManager.getEntries() ?? [];
    return entries.some((entry) => {
      const candidate = entry as { type?: string; customType?: string; details?: unknown };
      return (
        candidate.type === "custom_message" &&
        candidate.customType === PIW_MESSAGE_TYPE &&
        piwDetails(candidate.details)?.piwMessageId === messageId
      );
    });
  }

  private onView(view: RunView): void {
    const mine =
      view.origin.kind === "pi" && view.origin.sessionId === this.ctx?.sessionManager.getSessionId();
    if (!mine) return;
    const known = this.views.get(view.runId);
    if (known && known.revision > view.revision) return;
    this.views.set(view.runId, view);
    if (this.ctx) this.onOwnView?.(view, this.ctx);
    if (this.shownRunId === undefined || view.runId === this.shownRunId || !isTerminalStatus(view.status)) {
      this.shownRunId = view.runId;
    }
    this.render();
    // Finished runs that are not shown are not needed any more.
    if (isTerminalStatus(view.status) && view.runId !== this.shownRunId) this.views.delete(view.runId);
    if (!this.isIdle()) return;
    // A run queued from elsewhere (a restart or an answer from the CLI) starts at this idle boundary;
    // any other change may have queued a message (a step prompt, a notification, the terminal message).
    if (view.status === "queued") void this.settled();
    else void this.deliver();
  }

  private async afterReconnect(): Promise<void> {
    // A restarted host cannot know what happened to a turn in flight: it is not attached any more.
    this.turn = undefined;
    if (this.isIdle()) await this.settled();
  }

  /** The widget above the editor and the footer status: rendered from the host's view only. */
  render(): void {
    const ui = this.ctx?.ui;
    const view = this.shownRunId === undefined ? undefined : this.views.get(this.shownRunId);
    if (!ui || !view) return;
    // In Pi's terminal UI the widget is as wide as the terminal; elsewhere (rpc) a fixed width.
    const width = process.stdout.isTTY ? Math.max(20, process.stdout.columns ?? 100) : 100;
    const lines = renderWidgetLines(view, { width });
    const status = renderFooterStatus(view);
    const widget = lines.join("\n");
    if (widget !== this.shown.widget) ui.setWidget(WIDGET_KEY, lines);
    if (status !== this.shown.status) ui.setStatus(WIDGET_KEY, status);
    this.shown = { widget, status };
  }

  /** The latest view the host pushed for a run, if it is being followed. */
  latestView(runId: string): RunView | undefined {
    return this.views.get(runId);
  }

  private showProblem(error: unknown): void {
    const message = error instanceof Error ? error.message : String(error);
    const status = `wf host problem: ${message.slice(0, 200)}`;
    this.shown = { ...this.shown, status };
    this.ctx?.ui.setStatus(WIDGET_KEY, status);
  }

  async shutdown(): Promise<void> {
    await this.host.close();
  }
}
