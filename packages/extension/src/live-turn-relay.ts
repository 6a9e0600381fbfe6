import { LatestThrottle } from "@piw/engine";
import { LiveTranscript, type LiveTranscriptSnapshot } from "@piw/protocol";
import type { OpenTurn } from "./session-phase.js";

/** The least time between two live transcripts sent for one turn; the latest waits out the rest. */
const LIVE_INTERVAL_MS = 100;

export interface LiveTurnSource {
  readonly sessionId: string;
  readonly host: {
    call(method: "turns.live", params: { sessionId: string; live: LiveTranscriptSnapshot }): Promise<unknown>;
  };
  currentTurn(): Promise<OpenTurn | null>;
}

interface Following {
  turn: Promise<OpenTurn | null>;
  transcript: LiveTranscript;
  throttle: LatestThrottle<LiveTranscriptSnapshot>;
}

/**
 * Reports what the model streams and calls in a workflow step's turn to the host (`turns.live`), so
 * a viewer shows the step's conversation as it happens; the settled messages come from Pi's session
 * entries once the turn ends. Only a turn the host said a workflow step owns is reported: the user's
 * own turns never leave Pi. At most one report per LIVE_INTERVAL_MS, each the whole bounded
 * transcript of the turn so far, so a skipped one loses nothing.
 */
export class LiveTurnRelay {
  private following: Following | undefined;

  constructor(private readonly source: LiveTurnSource) {}

  /** One of Pi's message or tool events. Contract: never throws; a lost report is only live text. */
  observe(event: unknown): void {
    const turn = this.source.currentTurn();
    let following = this.following;
    if (following?.turn !== turn) {
      following = this.follow(turn);
      this.following = following;
    }
    if (!following.transcript.apply(event)) return;
    const snapshot = following.transcript.snapshot();
    const current = following;
    turn.then(
      (open) => {
        if (open !== null && this.following === current) current.throttle.push(snapshot);
      },
      () => undefined,
    );
  }

  private follow(turn: Promise<OpenTurn | null>): Following {
    const following: Following = {
      turn,
      transcript: new LiveTranscript(),
      throttle: new LatestThrottle((live: LiveTranscriptSnapshot) => {
        // A report left waiting when the next turn began belongs to no turn any more.
        if (this.following !== following) return;
        let sessionId: string;
        try {
          sessionId = this.source.sessionId;
        } catch {
          return;
        }
        this.source.host.call("turns.live", { sessionId, live }).catch(() => undefined);
      }, LIVE_INTERVAL_MS),
    };
    return following;
  }
}
