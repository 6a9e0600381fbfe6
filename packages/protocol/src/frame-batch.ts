/**
 * Frames written in one turn of the event loop leave in one write. A host answering a group commit
 * replies to every request of it at once, and a worker running a burst of pure nodes sends an
 * advance per node: one pipe write each costs a system call and a wake-up of the reader, which on
 * these machines is dearer than the frame itself. The batch is written when the current turn's
 * callbacks and promise jobs are done (`process.nextTick` queued from a promise job runs after the
 * whole job queue), so nothing waits for a timer and the order of frames is kept.
 */
export interface FrameBatch {
  /** Queue one encoded frame (newline included). */
  send(line: string): void;
  /** Write what is queued now, before the stream is ended or the process leaves. */
  flush(): void;
}

export function frameBatch(write: (text: string) => void): FrameBatch {
  let queued: string[] = [];
  const flush = () => {
    if (queued.length === 0) return;
    const text = queued.length === 1 ? (queued[0] as string) : queued.join("");
    queued = [];
    write(text);
  };
  return {
    send(line) {
      if (queued.length === 0) process.nextTick(flush);
      queued.push(line);
    },
    flush,
  };
}
