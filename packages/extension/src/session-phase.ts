import type { ExtensionContext } from "@earendil-works/pi-coding-agent";

/** The workflow turn the host accepted for the running agent run. */
export interface OpenTurn {
  requestId: string;
  runId: string;
  /** The step prompt that started the turn: where its messages begin in the session file. */
  messageId: string;
}

/**
 * Where the Pi session is, as the bridge reports it to the host. Each phase holds what it owns: the
 * session's context once Pi gave one, the step prompt that is starting an agent run, the host's
 * answer about who owns the running turn, the report of a turn's end.
 */
export type SessionPhase =
  /** No `session_start` yet (or the extension shut down): no context, nothing to report. */
  | { kind: "detached" }
  /** Pi is idle: queued runs may activate and queued messages are delivered. */
  | { kind: "idle"; ctx: ExtensionContext }
  /** Pi is busy with work no turn report covers yet: a message piw just sent to start a turn, or a
   *  session that was busy when it started. */
  | { kind: "busy"; ctx: ExtensionContext }
  /** `before_agent_start`: the agent run about to start, and the piw step prompt that starts it. */
  | { kind: "starting"; ctx: ExtensionContext; promptId: string | undefined }
  /** An agent run is going; `turn` is the host's answer to whether a workflow owns it. */
  | { kind: "agent"; ctx: ExtensionContext; turn: Promise<OpenTurn | null> }
  /** `agent_end` was seen; `ended` settles once the host has the turn's end. */
  | { kind: "ending"; ctx: ExtensionContext; ended: Promise<void> };

/** What moves the session from one phase to the next. */
export type SessionEvent =
  | { type: "context"; ctx: ExtensionContext }
  | { type: "session_start"; ctx: ExtensionContext }
  | { type: "before_agent_start"; promptId: string | undefined }
  | { type: "agent_start"; turn: Promise<OpenTurn | null> }
  | { type: "agent_end"; ended: Promise<void> }
  | { type: "turn_triggered" }
  | { type: "settled" }
  /** The host restarted: it cannot know what happened to a turn in flight, which is not attached any more. */
  | { type: "host_restarted" }
  | { type: "shutdown" };

const NO_TURN: Promise<OpenTurn | null> = Promise.resolve(null);

/** The one place the session's phase changes. Events that do not apply to a phase leave it as it is. */
export function nextPhase(phase: SessionPhase, event: SessionEvent): SessionPhase {
  if (event.type === "session_start") {
    return event.ctx.isIdle() ? { kind: "idle", ctx: event.ctx } : { kind: "busy", ctx: event.ctx };
  }
  if (event.type === "shutdown") return { kind: "detached" };
  if (phase.kind === "detached") return event.type === "context" ? { kind: "idle", ctx: event.ctx } : phase;
  const { ctx } = phase;
  switch (event.type) {
    case "context":
      return { ...phase, ctx: event.ctx };
    case "before_agent_start":
      return { kind: "starting", ctx, promptId: event.promptId };
    case "agent_start":
      return { kind: "agent", ctx, turn: event.turn };
    case "agent_end":
      return { kind: "ending", ctx, ended: event.ended };
    case "turn_triggered":
      return phase.kind === "idle" ? { kind: "busy", ctx } : phase;
    case "settled":
      return { kind: "idle", ctx };
    case "host_restarted":
      return phase.kind === "agent" ? { ...phase, turn: NO_TURN } : phase;
    default:
      return event satisfies never;
  }
}

/** The piw step prompt an `agent_start` proposes to the host, if the agent run was started by one. */
export function proposedPrompt(phase: SessionPhase): string | undefined {
  return phase.kind === "starting" ? phase.promptId : undefined;
}

/** The host's answer about the running turn; none outside an agent run. */
export function runningTurn(phase: SessionPhase): Promise<OpenTurn | null> {
  return phase.kind === "agent" ? phase.turn : NO_TURN;
}
