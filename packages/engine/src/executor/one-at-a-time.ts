/**
 * Runs the work given to it one piece at a time, in the order it was given: the run's Pi conversation
 * holds one step at a time, so conversation agent steps of parallel branches queue here.
 */
export class OneAtATime {
  private tail: Promise<void> = Promise.resolve();

  run<T>(work: () => Promise<T>): Promise<T> {
    const result = this.tail.then(work);
    // The next piece waits for this one however it ends.
    this.tail = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }
}
