import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { RunView } from "@piw/protocol";
import { isTerminalStatus } from "@piw/protocol";
import { renderFooterStatus, renderWidgetLines } from "@piw/viewer";

const WIDGET_KEY = "piw";
/** Where Pi draws no terminal (rpc, print) the widget's lines go out as text at this width. */
const TEXT_WIDTH = 100;
const MIN_WIDTH = 20;

type Ui = ExtensionContext["ui"];

/** What the widget has put on screen, so an unchanged view draws nothing. */
type Drawn =
  | { kind: "nothing" }
  /** Pi's terminal UI draws the widget component at the width it gives `render(width)`. */
  | { kind: "component"; status: string; redraw: (() => void) | undefined }
  /** Without a terminal UI the widget is its text lines at a fixed width. */
  | { kind: "lines"; status: string; widget: string };

/**
 * The widget above the editor and the footer status of one Pi session: rendered from the host's
 * views of the session's runs only. It shows the run last started or followed, else the newest one
 * that is not finished.
 */
export class RunWidget {
  private readonly views = new Map<string, RunView>();
  private shownRunId: string | undefined;
  private drawn: Drawn = { kind: "nothing" };

  /** The latest view the host pushed for a run, if it is being followed. */
  latest(runId: string): RunView | undefined {
    return this.views.get(runId);
  }

  /** The Pi session of the run on show, if any. */
  shownSession(): string | undefined {
    const origin = this.shown()?.origin;
    return origin?.kind === "pi" ? origin.sessionId : undefined;
  }

  /** Show this run from now on (it was just started, answered or restarted). */
  follow(runId: string): void {
    this.shownRunId = runId;
  }

  /** Take a newer view of a run; false when it is older than the one held. */
  accept(view: RunView): boolean {
    const known = this.views.get(view.runId);
    if (known && known.revision > view.revision) return false;
    this.views.set(view.runId, view);
    if (this.shownRunId === undefined || view.runId === this.shownRunId || !isTerminalStatus(view.status)) {
      this.shownRunId = view.runId;
    }
    return true;
  }

  /** Finished runs that are not shown are not needed any more. */
  forgetHidden(view: RunView): void {
    if (isTerminalStatus(view.status) && view.runId !== this.shownRunId) this.views.delete(view.runId);
  }

  /** Another Pi session took over this process: show nothing of the last one's runs. */
  clear(ui: Ui): void {
    this.views.clear();
    this.shownRunId = undefined;
    this.drawn = { kind: "nothing" };
    ui.setWidget(WIDGET_KEY, undefined);
    ui.setStatus(WIDGET_KEY, undefined);
  }

  render(ctx: Pick<ExtensionContext, "ui" | "mode">): void {
    const view = this.shown();
    if (!view) return;
    const status = renderFooterStatus(view);
    const drawn = this.drawn;
    if (drawn.kind === "nothing" || drawn.status !== status) ctx.ui.setStatus(WIDGET_KEY, status);
    if (ctx.mode === "tui") {
      if (drawn.kind === "component") {
        this.drawn = { ...drawn, status };
        drawn.redraw?.();
        return;
      }
      const component: Drawn = { kind: "component", status, redraw: undefined };
      this.drawn = component;
      ctx.ui.setWidget(WIDGET_KEY, (tui) => {
        component.redraw = () => tui.requestRender();
        return { render: (width: number) => this.lines(width), invalidate: () => {} };
      });
      return;
    }
    const lines = this.lines(TEXT_WIDTH);
    const widget = lines.join("\n");
    if (drawn.kind !== "lines" || drawn.widget !== widget) ctx.ui.setWidget(WIDGET_KEY, lines);
    this.drawn = { kind: "lines", status, widget };
  }

  /** A problem reaching the host, in the footer until the next view replaces it. */
  showProblem(ui: Ui, message: string): void {
    const status = `wf host problem: ${message.slice(0, 200)}`;
    if (this.drawn.kind !== "nothing") this.drawn = { ...this.drawn, status };
    ui.setStatus(WIDGET_KEY, status);
  }

  private shown(): RunView | undefined {
    return this.shownRunId === undefined ? undefined : this.views.get(this.shownRunId);
  }

  private lines(width: number): string[] {
    const view = this.shown();
    return view ? renderWidgetLines(view, { width: Math.max(MIN_WIDTH, width) }) : [];
  }
}
