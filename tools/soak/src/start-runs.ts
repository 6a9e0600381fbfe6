import { setTimeout as sleep } from "node:timers/promises";
import { type CallParams, newRequestKey } from "@piw/client";
import { type LoadedWorkflow, loadWorkflowFile } from "@piw/engine";
import type { JsonValue } from "@piw/protocol";
import type { Scratch, SoakContext } from "./context.js";
import type { SoakWorkflow } from "./tally.js";
import {
  MAP_RACE_LOSERS,
  mapRunPaths,
  RACE_LOSERS,
  writeChainWorkflow,
  writeMapWorkflow,
  writeParallelWorkflow,
} from "./workflows.js";

/**
 * Loads a written workflow; its completed runs must show every node of its manifest (`concrete`
 * turns a map's template paths into its items' paths).
 */
async function soakWorkflow(
  kind: SoakWorkflow["kind"],
  file: string,
  losers: ReadonlySet<string>,
  concrete: (paths: string[]) => string[] = (paths) => paths,
): Promise<SoakWorkflow> {
  const loaded = await loadWorkflowFile(file);
  const nodes = loaded.workflow.manifest.nodes;
  const paths = concrete(nodes.map((n) => n.path));
  const actions = concrete(nodes.filter((n) => n.kind === "action").map((n) => n.path)).length;
  return { kind, loaded, expected: { paths, actions, losers } };
}

/** Writes and loads the workflows the settings name, in the order chain, parallel, map. */
export async function loadSoakWorkflows(soak: SoakContext): Promise<SoakWorkflow[]> {
  const { root } = soak.scratch;
  const { workflows: named, deadlineMs } = soak.settings;
  const workflows: SoakWorkflow[] = [];
  if (named.includes("chain"))
    workflows.push(
      await soakWorkflow(
        "chain",
        writeChainWorkflow(root, soak.settings.nodes, deadlineMs, soak.settings.pure),
        new Set(),
      ),
    );
  if (named.includes("parallel"))
    workflows.push(await soakWorkflow("parallel", writeParallelWorkflow(root, deadlineMs), RACE_LOSERS));
  if (named.includes("map"))
    workflows.push(
      await soakWorkflow("map", writeMapWorkflow(root, deadlineMs), MAP_RACE_LOSERS, mapRunPaths),
    );
  return workflows;
}

function reserveParams(loaded: LoadedWorkflow, tag: string, scratch: Scratch): CallParams<"runs.reserve"> {
  return {
    workflowName: loaded.name,
    source: loaded.source,
    definitionDigest: loaded.workflow.digest,
    manifest: loaded.workflow.manifest as unknown as JsonValue,
    input: { tag, ledger: scratch.ledger },
    origin: { kind: "cli" },
    workingDir: scratch.root,
  };
}

export async function startRun(soak: SoakContext, workflow: SoakWorkflow, index: number): Promise<void> {
  const { host, tally } = soak;
  const figures = tally.figures;
  const tag = `soak-${soak.settings.seed}-${index}`;
  // One key for every send of this start: a reserve whose reply died with the host is sent again
  // with it, and the host answers with the run it had already saved instead of making a second one.
  const requestKey = newRequestKey();
  for (;;) {
    const reply = await host.call("runs.reserve", {
      ...reserveParams(workflow.loaded, tag, soak.scratch),
      requestKey,
    });
    if (reply !== undefined && reply.kind !== "conflict" && reply.kind !== "recoveryRequired") {
      if (reply.kind === "adopted") figures.reservesAdopted += 1;
      tally.runs.set(reply.value.runId, {
        runId: reply.value.runId,
        tag,
        workflow,
        resumes: 0,
        checked: false,
        completed: false,
      });
      figures.runsStarted += 1;
      return;
    }
    if (reply !== undefined)
      throw new Error(`runs.reserve was refused: ${JSON.stringify(reply).slice(0, 300)}`);
    figures.reserveResends += 1;
    if (figures.reserveResends > 1000) throw new Error("runs.reserve kept losing its reply: is the host up?");
    await sleep(50);
  }
}
