import type { ExtensionAPI, MessageRenderer } from "@earendil-works/pi-coding-agent";
import { Container, Spacer, Text, TruncatedText } from "@earendil-works/pi-tui";
import { messageCardLine } from "./message-card.js";
import { PIW_MESSAGE_TYPE, piwDetails } from "./piw-message-details.js";

/** The text of a custom message's content, whether Pi keeps it as a string or as parts. */
function contentText(content: string | ReadonlyArray<{ type: string; text?: string }>): string {
  if (typeof content === "string") return content;
  return content
    .filter((part) => part.type === "text" && typeof part.text === "string")
    .map((part) => part.text)
    .join("\n");
}

/**
 * piw's messages as compact cards in Pi's chat: one line with the run, step and state, and the whole
 * text when the user expands tool output. Only the drawing changes: the model receives the message's
 * full content either way. A message without piw's details falls back to Pi's own rendering.
 */
const renderPiwMessage: MessageRenderer = (message, options, theme) => {
  const details = piwDetails(message.details);
  if (details === undefined) return undefined;
  const body = contentText(message.content);
  const line = messageCardLine(details, body);
  const card = new Container();
  card.addChild(new Spacer(1));
  const tint = details.kind === "launch_failure" || details.state === "failed" ? "error" : "accent";
  const hint = options.expanded ? "" : ` ${options.keyHint("app.tools.expand", "to expand")}`;
  card.addChild(new TruncatedText(`${theme.fg(tint, "◆")} ${line}${hint}`, options.outputPad, 0));
  if (options.expanded) card.addChild(new Text(theme.fg("muted", body), options.outputPad + 2, 0));
  return card;
};

export function registerPiwMessageRenderer(pi: ExtensionAPI): void {
  pi.registerMessageRenderer(PIW_MESSAGE_TYPE, renderPiwMessage);
}
