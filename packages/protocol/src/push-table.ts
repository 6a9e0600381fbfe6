import type { z } from "zod";

/**
 * One direction's pushes: each push name and the schema of its data. The host pushes `clientPushes`
 * to clients and `workerPushes` to workers; clients and workers push nothing to the host, so their
 * peers have no push table and a push from them does not compile.
 */
export type PushTable = Record<string, z.ZodType>;

/** A peer that sends no pushes. */
export type NoPushes = Record<never, never>;

/** The name of a push of table `P`. */
export type PushName<P extends PushTable> = keyof P & string;

/**
 * One push of table `P` as its sender writes it: the name with its data, paired so that checking the
 * name narrows the data. A name outside the table, or data its schema would refuse, does not compile.
 */
export type PushArgs<P extends PushTable> = {
  [K in PushName<P>]: [push: K, data: z.input<P[K]>];
}[PushName<P>];

/** The data of push `K` of table `P`, as its sender writes it. */
export type PushData<P extends PushTable, K extends PushName<P>> = z.input<P[K]>;

/** Every push of the table has its handler, which gets the data already parsed. */
export type PushHandlers<P extends PushTable> = { [K in keyof P]: (data: z.infer<P[K]>) => void };

/**
 * The `onPush` of a peer that receives `schemas`: each push's data is parsed with its schema at the
 * boundary and handed to its handler. A push this side does not know is ignored (a newer peer may
 * send more); one whose data does not match its schema is dropped and goes to `onInvalid` (named, never
 * with its data), never to the handler: every receiver says what such a drop means to it.
 */
export function dispatchPushes<P extends PushTable>(
  schemas: P,
  handlers: PushHandlers<P>,
  onInvalid: (push: PushName<P>) => void,
): (push: string, data: unknown) => void {
  return (push, data) => {
    if (!Object.hasOwn(schemas, push)) return;
    const name = push as PushName<P>;
    const parsed = (schemas[name] as z.ZodType).safeParse(data);
    if (parsed.success) handlers[name](parsed.data as z.infer<P[typeof name]>);
    else onInvalid(name);
  };
}
