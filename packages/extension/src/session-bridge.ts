import { randomUUID } from "node:crypto";
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import { isTerminalStatus, type MessageKind, type RunView, type TurnAbort } from "@piw/protocol";
import { runStateWord } from "@piw/viewer";
import { HostLink, type HostLinkOptions, savedOrThrow, WorkflowError } from "./host-link.js";
import { turnEndReason, replyUsage } from "./assistant-reply.js";
import { PIW_MESSAGE_TYPE, type PiwMessageDetails, piwDetails } from "./piw-message-details.js";
import { RunWidget } from "./run-widget.js";
import { inSession, turnEntries } from "./session-entries.js";
import {
  nextPhase,
  type OpenTurn,
  proposedPrompt,
  runningTurn,
  type SessionEvent,
  type SessionPhase,
} from "./session-phase.js";

/** Messages saved with the run's end: when one is delivered, the run has ended. */
const RUN_END_MESSAGES: ReadonlySet<MessageKind> = new Set(["launch_failure", "terminal", "presentation"]);

export type SessionBridgeOptions = Omit<HostLinkOptions, "onView" | "onReconnect"> & {
  /** Called with every newer view of a run of this session (the gate dialogs watch them). */
  onOwnView?: (view: RunView, ctx: ExtensionContext) => void;
};

/** Delivery of the session's queued messages: one pass at a time, and one more if asked meanwhile. */
type Delivery = { kind: "quiet" } | { kind: "delivering"; done: Promise<void>; again: boolean };

/**
 * Everything that ties one Pi session to the host: turn reports (the turn-ownership rule), activation at idle
 * boundaries and outbox delivery (idle-activation rule), and the widget. The host decides; this only reports
 * what Pi did and delivers what the host queued. Where the session is lives in one phase
 * (`SessionPhase`), changed only through `nextPhase`.
 */
export class SessionBridge {
  readonly host: HostLink;
  private phase: SessionPhase = { kind: "detached" };
  private delivery: Delivery = { kind: "quiet" };
  /** IDs this process handed to Pi; the session entries prove the rest. */
  private readonly sent = new Set<string>();
  private readonly widget = new RunWidget();

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

  private move(event: SessionEvent): void {
    this.phase = nextPhase(this.phase, event);
  }

  private get ctx(): ExtensionContext | undefined {
    return this.phase.kind === "detached" ? undefined : this.phase.ctx;
  }

  get sessionId(): string {
    const id = this.ctx?.sessionManager.getSessionId();
    if (!id) throw new WorkflowError("The Pi session is not ready yet; try again in a moment.");
    return id;
  }

  /** The turn Pi runs now, as the host answered for it: null when no workflow step owns it. */
  currentTurn(): Promise<OpenTurn | null> {
    return runningTurn(this.phase);
  }

  /** The working folder of the freshest context, if Pi has given one yet. */
  get cwd(): string | undefined {
    return this.ctx?.cwd;
  }

  /** Keep the freshest context: UI calls and session reads go through it. */
  remember(ctx: ExtensionContext): void {
    this.move({ type: "context", ctx });
  }

  isIdle(): boolean {
    return this.phase.kind === "idle" && this.phase.ctx.isIdle();
  }

  /** `session_start`: nothing is running, so earlier turns are unproved, queued runs may start. */
  async sessionStarted(ctx: ExtensionContext): Promise<void> {
    this.move({ type: "session_start", ctx });
    const sessionId = this.sessionId;
    // A new, resumed or forked session shows its own runs only.
    const previous = this.widget.shownSession();
    if (previous !== undefined && previous !== sessionId) this.widget.clear(ctx.ui);
    await this.host.call("turns.settle", { sessionId });
    this.host.watchSession(sessionId);
    const [latest] = await this.host.call("runs.list", { sessionId, limit: 1 });
    if (latest) {
      this.widget.follow(latest.runId);
      const view = await this.host.call("runs.get", { runId: latest.runId });
      if (view) this.onView(view);
    }
    if (this.isIdle()) await this.settled();
  }

  /** `before_agent_start`: remember which piw step prompt (if any) starts this agent run. */
  agentStarting(message: { customType?: string; details?: unknown } | undefined): void {
    const details = message?.customType === PIW_MESSAGE_TYPE ? piwDetails(message.details) : undefined;
    this.move({
      type: "before_agent_start",
      promptId: details?.kind === "step_prompt" ? details.piwMessageId : undefined,
    });
  }

  /** `agent_start`: propose the step prompt that started this run; the host says who owns the turn. */
  agentStarted(): void {
    const messageId = proposedPrompt(this.phase);
    this.move({
      type: "agent_start",
      turn: messageId === undefined ? Promise.resolve(null) : this.proposeTurn(messageId),
    });
  }

  /** Unproved turns resolve to no turn: the host settles them as lost at the next boundary. */
  private async proposeTurn(messageId: string): Promise<OpenTurn | null> {
    const requestId = `req:${randomUUID()}`;
    try {
      const result = await this.host.call("turns.start", { sessionId: this.sessionId, requestId, messageId });
      const ownership = savedOrThrow(result, "turn start");
      return ownership.owner === "workflow" && ownership.turn.runId !== null
        ? { requestId, runId: ownership.turn.runId, messageId }
        : null;
    } catch {
      return null;
    }
  }

  /** The workflow turn whose usage is summed now, and the sum of its model replies so far. */
  private turnUsage: { requestId: string; tokens: number; usd: number } | null = null;

  /**
   * `message_end`: one model reply of the agent run. For a workflow turn, the turn's usage so far goes
   * to the host; at the run's budget the host says stop, and the turn is aborted here, before Pi
   * calls the model again (Pi waits for this handler).
   */
  async messageEnded(message: unknown): Promise<void> {
    const used = replyUsage(message);
    if (used === null) return;
    const known = runningTurn(this.phase);
    const turn = await known;
    if (!turn) return;
    const sum =
      this.turnUsage?.requestId === turn.requestId
        ? this.turnUsage
        : { requestId: turn.requestId, tokens: 0, usd: 0 };
    sum.tokens += used.tokens;
    sum.usd += used.usd;
    this.turnUsage = sum;
    try {
      const { stop } = await this.host.call("turns.usage", {
        sessionId: this.sessionId,
        requestId: turn.requestId,
        tokens: sum.tokens,
        usd: sum.usd,
      });
      if (stop !== null && runningTurn(this.phase) === known) this.ctx?.abort();
    } catch {
      // A host that is away gets the next reply's sum; the store keeps the largest it saw.
    }
  }

  /** `agent_end`: end exactly the turn the host accepted. */
  agentEnded(messages: readonly unknown[]): Promise<void> {
    const ended = this.endTurn(runningTurn(this.phase), messages);
    this.move({ type: "agent_end", ended });
    return ended;
  }

  private async endTurn(known: Promise<OpenTurn | null>, messages: readonly unknown[]): Promise<void> {
    const turn = await known;
    if (!turn) return;
    try {
      const entries = turnEntries(this.ctx?.sessionManager, turn.messageId);
      await this.host.call("turns.end", {
        sessionId: this.sessionId,
        requestId: turn.requestId,
        reason: turnEndReason(messages),
        ...(entries === undefined ? {} : { entries }),
      });
    } catch {
      // The host settles the open turn as lost when it next sees this session idle.
    }
  }

  /** `agent_settled` (and any other idle boundary): activate queued runs, then deliver messages. */
  async settled(): Promise<void> {
    const ending = this.phase.kind === "ending" ? this.phase.ended : undefined;
    this.move({ type: "settled" });
    const sessionId = this.sessionId;
    // The turn's end must reach the host before anything still open is settled as lost.
    await ending;
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
  async whenTurnKnown(): Promise<void> {
    await runningTurn(this.phase);
  }

  /** Show and follow a run of this session (after a start, answer or restart). */
  follow(runId: string): void {
    this.widget.follow(runId);
    this.host.watchSession(this.sessionId);
  }

  /**
   * Deliver the session's queued messages while Pi is idle, oldest first. At most one of them starts
   * a turn; the rest wait for the next idle boundary. A message already in the session (a crash
   * between append and acknowledgement) is acknowledged, never sent twice. Pi is checked for idle in
   * the same tick as each send, so a turn that starts meanwhile never receives a piw message.
   */
  deliver(): Promise<void> {
    const current = this.delivery;
    if (current.kind === "delivering") {
      current.again = true;
      return current.done;
    }
    const delivering: Delivery = { kind: "delivering", done: Promise.resolve(), again: false };
    delivering.done = (async () => {
      try {
        do {
          delivering.again = false;
          await this.deliverOnce();
        } while (delivering.again && this.isIdle());
      } catch (error) {
        this.showProblem(error);
      } finally {
        this.delivery = { kind: "quiet" };
      }
    })();
    this.delivery = delivering;
    return delivering.done;
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
      const already =
        this.sent.has(message.messageId) || inSession(this.ctx?.sessionManager, message.messageId);
      if (!already) {
        const view = await this.viewAtDelivery(message);
        // Pi may have started a turn while the host answered: sent now, the message would land inside
        // that turn (Pi queues it into the running agent run). It goes back to the outbox instead and
        // is sent at the next idle boundary. No await between this check and the send.
        if (!this.isIdle()) {
          await this.host.call("messages.release", { sessionId, messageId: message.messageId });
          return;
        }
        this.sent.add(message.messageId);
        const details: PiwMessageDetails = {
          piwMessageId: message.messageId,
          runId: message.runId,
          kind: message.kind,
          path: message.path,
          visit: message.visit,
          ...(view ? { workflow: view.workflowName, state: runStateWord(view) } : {}),
        };
        if (message.triggerTurn) this.move({ type: "turn_triggered" });
        this.pi.sendMessage(
          { customType: PIW_MESSAGE_TYPE, content: message.body, display: true, details },
          message.triggerTurn ? { triggerTurn: true, deliverAs: "followUp" } : {},
        );
      }
      await this.host.call("messages.delivered", { messageId: message.messageId });
      if (message.triggerTurn && !already) return;
    }
  }

  /**
   * The run's view for a message's card. The widget's copy can be a push behind the store: a message
   * about the run's end is saved together with that end, so a copy that has not seen it yet is asked
   * for again rather than showing the card of a finished run as `running`.
   */
  private async viewAtDelivery(message: { runId: string; kind: MessageKind }): Promise<RunView | undefined> {
    const cached = this.widget.latest(message.runId);
    if (!RUN_END_MESSAGES.has(message.kind) || (cached !== undefined && isTerminalStatus(cached.status))) {
      return cached;
    }
    return (await this.host.call("runs.get", { runId: message.runId })) ?? cached;
  }

  private onView(view: RunView): void {
    // The host sends this session's runs only; a view still in flight from the last session is dropped.
    const mine =
      view.origin.kind === "pi" && view.origin.sessionId === this.ctx?.sessionManager.getSessionId();
    if (!mine) return;
    if (view.abortTurn) void this.abortTurn(view.abortTurn);
    if (!this.widget.accept(view)) return;
    if (this.ctx) this.onOwnView?.(view, this.ctx);
    this.render();
    this.widget.forgetHidden(view);
    if (!this.isIdle()) return;
    // A run queued from elsewhere (a restart or an answer from the CLI) starts at this idle boundary;
    // any other change may have queued a message (a step prompt, a notification, the terminal message).
    if (view.status === "queued") void this.settled();
    else void this.deliver();
  }

  /**
   * The host decided that a turn must stop (its step's deadline passed, the run was cancelled or
   * paused, its claim was lost): abort the running agent run if it is that very turn. The turn report
   * at `agent_end` then ends it; nothing here decides that a step is over.
   */
  private async abortTurn(stop: TurnAbort): Promise<void> {
    const known = runningTurn(this.phase);
    const turn = await known;
    // Still the same agent run (the phase may have moved on while the host's answer was awaited).
    if (turn?.requestId !== stop.requestId || runningTurn(this.phase) !== known) return;
    this.ctx?.abort();
  }

  private async afterReconnect(): Promise<void> {
    this.move({ type: "host_restarted" });
    if (this.isIdle()) await this.settled();
  }

  /** The widget above the editor and the footer status: rendered from the host's view only. */
  render(): void {
    const ctx = this.ctx;
    if (ctx) this.widget.render(ctx);
  }

  /** The latest view the host pushed for a run, if it is being followed. */
  latestView(runId: string): RunView | undefined {
    return this.widget.latest(runId);
  }

  private showProblem(error: unknown): void {
    const ui = this.ctx?.ui;
    if (ui) this.widget.showProblem(ui, error instanceof Error ? error.message : String(error));
  }

  async shutdown(): Promise<void> {
    this.move({ type: "shutdown" });
    await this.host.close();
  }
}
