import { describe, expect, it } from "vitest";
import { modelFailureMessage } from "../src/model-failure-message.js";

// Which provider errors fail an isolated step at once (model_unavailable) and which stay lost turns.
const fails = (text: string) => modelFailureMessage(text, "review", "acme/m1", "acme");

describe("a provider error that no retry heals", () => {
  it.each([
    ["401 Incorrect API key provided: sk-abc…", "refused the credentials for model acme/m1"],
    ["403 Forbidden", "refused the credentials for model acme/m1"],
    ["No API key found for acme.", "refused the credentials for model acme/m1"],
    ["authentication_error: invalid x-api-key", "refused the credentials for model acme/m1"],
    ["404 The model `m1` does not exist or you do not have access to it.", "does not know model acme/m1"],
    ["model_not_found", "does not know model acme/m1"],
    ["429 You exceeded your current quota, please check your plan and billing details.", "quota or billing"],
    ["insufficient_quota", "quota or billing"],
  ])("%s fails the step", (text, says) => {
    const message = fails(text);
    expect(message).toContain(says);
    expect(message).toContain("Agent step review");
    // The provider's own words are never repeated: they may quote a key.
    expect(message).not.toContain("sk-abc");
    expect(message).not.toContain(text);
  });

  it.each([
    "500 Internal server error",
    "503 Service temporarily unavailable",
    "429 Too many requests: rate limit reached",
    "fetch failed",
    "read ECONNRESET",
    "Request timed out.",
    "",
  ])("%s stays a lost turn", (text) => {
    expect(fails(text)).toBeNull();
  });
});
