import { compute, defineWorkflow, map, type NodeContext } from "piw";
import { z } from "zod";

type Input = { task: string };

/** The branch, run once per word: its input is the word, and `ctx.mapIndex` is the word's place. */
const measure = defineWorkflow({
  name: "measure",
  input: z.string().min(1),
  startAt: "letters",
  nodes: {
    letters: compute({ run: ({ input }: NodeContext<string>) => input.length }),
    describe: compute({
      run: ({ input, outputs, mapIndex }: NodeContext<string>) => ({
        word: input,
        at: mapIndex,
        letters: outputs.letters as number,
      }),
    }),
  },
  edges: { letters: { to: "describe" }, describe: { to: "done" } },
});

/** A map node: the branch once per word of the task, three at a time, joined in word order. */
export default defineWorkflow({
  name: "map",
  input: z.object({ task: z.string() }),
  startAt: "words",
  nodes: {
    words: map({
      title: "Each word",
      over: ({ input }: { input: Input }) => input.task.split(/\s+/).filter(Boolean),
      branch: measure,
      concurrency: 3,
      maxItems: 20,
    }),
    longest: compute({
      run: ({ outputs }) => {
        const measured = outputs.words as { word: string; at: number; letters: number }[];
        const top = measured.reduce((a, b) => (b.letters > a.letters ? b : a));
        return `${top.word} (word ${top.at + 1} of ${measured.length})`;
      },
    }),
    nothing: compute({ run: () => "no words to measure" }),
  },
  edges: {
    words: { to: ["longest", "nothing"], route: (measured) => (measured.length > 0 ? "longest" : "nothing") },
    longest: { to: "done" },
    nothing: { to: "done" },
  },
});
