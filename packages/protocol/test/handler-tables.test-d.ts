import { describe, expectTypeOf, it } from "vitest";
import { z } from "zod";
import {
  type clientMethods,
  type clientPushes,
  dispatchPushes,
  type Handlers,
  type PushHandlers,
  RpcPeer,
  type workerMethods,
  type workerPushes,
} from "../src/index.js";

const methods = {
  add: { params: z.object({ a: z.number(), b: z.number() }), result: z.number() },
  echo: { params: z.object({ text: z.string() }), result: z.string() },
};

describe("handler tables", () => {
  it("require every method of the table", () => {
    // @ts-expect-error `echo` has no handler
    const missing: Handlers<typeof methods> = { add: ({ a, b }) => a + b };
    void missing;
    const full: Handlers<typeof methods> = { add: ({ a, b }) => a + b, echo: ({ text }) => text };
    expectTypeOf(full).toEqualTypeOf<Handlers<typeof methods>>();
  });

  it("type each handler's params and result from its schemas", () => {
    const wrong: Handlers<typeof methods> = {
      // @ts-expect-error `add` must return a number
      add: () => "three",
      // @ts-expect-error `text` is a string, not a number
      echo: ({ text }: { text: number }) => String(text),
    };
    void wrong;
  });

  it("leave no client, worker or push method optional", () => {
    type Optional<T> = { [K in keyof T]-?: undefined extends T[K] ? K : never }[keyof T];
    expectTypeOf<Optional<Handlers<typeof clientMethods>>>().toEqualTypeOf<never>();
    expectTypeOf<Optional<Handlers<typeof workerMethods>>>().toEqualTypeOf<never>();
    expectTypeOf<Optional<PushHandlers<typeof workerPushes>>>().toEqualTypeOf<never>();
    expectTypeOf<Optional<PushHandlers<typeof clientPushes>>>().toEqualTypeOf<never>();
    expectTypeOf<keyof Handlers<typeof clientMethods>>().toEqualTypeOf<keyof typeof clientMethods>();
    expectTypeOf<keyof Handlers<typeof workerMethods>>().toEqualTypeOf<keyof typeof workerMethods>();
  });

  it("refuse a peer whose local table lacks a handler", () => {
    new RpcPeer({
      send: () => {},
      // @ts-expect-error `echo` has no handler
      local: { methods, handlers: { add: ({ a, b }) => a + b } },
    });
  });

  it("refuse a push table with a handler missing", () => {
    const pushes = { ping: z.object({ at: z.number() }), stop: z.object({ reason: z.string() }) };
    // @ts-expect-error `stop` has no handler
    dispatchPushes(pushes, { ping: ({ at }) => void at }, () => {});
    dispatchPushes(
      pushes,
      {
        ping: ({ at }) => expectTypeOf(at).toEqualTypeOf<number>(),
        stop: ({ reason }) => expectTypeOf(reason).toEqualTypeOf<string>(),
      },
      (push) => expectTypeOf(push).toEqualTypeOf<"ping" | "stop">(),
    );
  });
});
