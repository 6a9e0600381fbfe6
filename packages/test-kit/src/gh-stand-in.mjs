#!/usr/bin/env node
// A stand-in for `gh` (the GitHub CLI cannot reach GitHub here): the commands autoimplement's publish
// runs, over a JSON state file the test controls, each call appended to a log. Not GitHub: a PR is a
// row in the state; `pr create` checks that the branch was pushed to the folder's `origin`.
// GH_STAND_IN_DIR names the folder of `state.json` and `calls.jsonl`.
import { execFileSync } from "node:child_process";
import { appendFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const dir = process.env.GH_STAND_IN_DIR;
if (!dir) fail("GH_STAND_IN_DIR is not set");
const statePath = join(dir, "state.json");
const args = process.argv.slice(2);
appendFileSync(join(dir, "calls.jsonl"), `${JSON.stringify({ args, cwd: process.cwd() })}\n`);

const state = existsSync(statePath) ? JSON.parse(readFileSync(statePath, "utf8")) : {};
state.auth ??= true;
state.prs ??= [];
state.checks ??= [];
state.checksCalls ??= 0;
state.logs ??= {};

function save() {
  writeFileSync(statePath, `${JSON.stringify(state, null, 2)}\n`);
}
function fail(message, code = 1) {
  process.stderr.write(`${message}\n`);
  process.exit(code);
}
function option(name) {
  const at = args.indexOf(name);
  return at < 0 ? undefined : args[at + 1];
}
/** The fields `--json a,b` asks for, picked from a record. */
function pick(record) {
  const fields = (option("--json") ?? "").split(",").filter((f) => f !== "");
  return Object.fromEntries(fields.map((f) => [f, record[f]]));
}
/** A PR by its number, or (as `gh pr view <branch>` takes) by its head branch. */
function pr(number) {
  return (
    state.prs.find((p) => String(p.number) === String(number)) ??
    state.prs.find((p) => p.head === number) ??
    fail(`no pull requests found for ${number}`)
  );
}

const [group, command, subject] = args;
const key = `${group} ${command}`;
if (key === "auth status") {
  if (!state.auth) fail("You are not logged into any GitHub hosts. To log in, run: gh auth login");
  process.stdout.write("github.com\n  ✓ Logged in to github.com account stand-in\n");
} else if (key === "pr list") {
  const open = state.prs.filter(
    (p) => p.state === "OPEN" && p.head === option("--head") && p.base === option("--base"),
  );
  process.stdout.write(`${JSON.stringify(open.slice(0, Number(option("--limit") ?? 30)).map(pick))}\n`);
} else if (key === "pr create") {
  const head = option("--head");
  try {
    execFileSync("git", ["ls-remote", "--exit-code", "origin", `refs/heads/${head}`], { stdio: "ignore" });
  } catch {
    fail(`pull request create failed: head branch ${head} is not on the remote`);
  }
  state.nextNumber ??= 1;
  const number = state.nextNumber++;
  const url = `https://github.com/acme/widget/pull/${number}`;
  state.prs.push({
    number,
    url,
    head,
    base: option("--base"),
    title: option("--title"),
    body: option("--body"),
    state: "OPEN",
  });
  const crash = state.crashAfterCreate === true;
  state.crashAfterCreate = false;
  save();
  // A worker that dies after GitHub made the PR and before piw saved it: the retry must find it.
  if (crash) process.kill(process.ppid, "SIGKILL");
  process.stdout.write(`${url}\n`);
} else if (key === "pr view") {
  process.stdout.write(`${JSON.stringify(pick(pr(subject)))}\n`);
} else if (key === "pr checks") {
  pr(subject);
  const snapshot = state.checks[Math.min(state.checksCalls, state.checks.length - 1)] ?? [];
  state.checksCalls += 1;
  save();
  if (snapshot.length === 0) fail(`no checks reported on the '${pr(subject).head}' branch`);
  process.stdout.write(`${JSON.stringify(snapshot.map(pick))}\n`);
  const buckets = snapshot.map((c) => c.bucket);
  process.exit(
    buckets.includes("fail") || buckets.includes("cancel") ? 1 : buckets.includes("pending") ? 8 : 0,
  );
} else if (key === "run view") {
  const log = state.logs[subject];
  if (log === undefined || !args.includes("--log-failed")) fail(`run ${subject} has no failed log`);
  process.stdout.write(log.endsWith("\n") ? log : `${log}\n`);
} else if (key === "pr merge") {
  const found = pr(subject);
  if (found.state !== "OPEN") fail(`Pull request #${subject} is not open`);
  found.state = "MERGED";
  found.mergedWith = args.find((a) => ["--merge", "--squash", "--rebase"].includes(a));
  save();
  process.stdout.write(`✓ Merged pull request #${subject}\n`);
} else {
  fail(`unknown command "${args.join(" ")}" for the gh stand-in`);
}
