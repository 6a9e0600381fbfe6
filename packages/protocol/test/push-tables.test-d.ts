import { describe, expectTypeOf, it } from "vitest";
import {
  type clientMethods,
  type clientPushes,
  dispatchPushes,
  type MethodTable,
  type PushArgs,
  RpcPeer,
  type RunView,
  type workerMethods,
  type workerPushes,
} from "../src/index.js";

declare const view: RunView;
const send = () => {};
// Each end as the host, the client and the worker build it.
const hostToClient = new RpcPeer<typeof clientMethods, Record<never, never>, typeof clientPushes>({ send });
const hostToWorker = new RpcPeer<typeof workerMethods, Record<never, never>, typeof workerPushes>({ send });
const clientToHost = new RpcPeer<Record<never, never>, typeof clientMethods>({ send });
const workerToHost = new RpcPeer<MethodTable, typeof workerMethods>({ send });

describe("push tables", () => {
  it("let the host push what each table holds", () => {
    hostToClient.push("run.view", { subscriptionId: "s1", view });
    hostToWorker.push("assign", { launchId: "launch-1", workingDir: "/tmp" });
    hostToWorker.push("cancel", { reason: "The run was cancelled." });
  });

  it("refuse a push name outside the direction's table", () => {
    // @ts-expect-error no such push to clients
    hostToClient.push("run.views", { subscriptionId: "s1", view });
    // @ts-expect-error `cancel` goes to workers, not clients
    hostToClient.push("cancel", { reason: "stop" });
    // @ts-expect-error `run.view` goes to clients, not workers
    hostToWorker.push("run.view", { subscriptionId: "s1", view });
    // @ts-expect-error a push needs its name
    hostToWorker.push();
  });

  it("refuse data its schema would not take", () => {
    // @ts-expect-error a view is a RunView
    hostToClient.push("run.view", { subscriptionId: "s1", view: { broken: true } });
    // @ts-expect-error `subscriptionId` is missing
    hostToClient.push("run.view", { view });
    // @ts-expect-error `launchId` is a string
    hostToWorker.push("assign", { launchId: 1, workingDir: "/tmp" });
    // @ts-expect-error `cancel` carries its reason
    hostToWorker.push("cancel", {});
    // @ts-expect-error a push's data is not left out
    hostToWorker.push("cancel");
  });

  it("let clients and workers push nothing to the host", () => {
    // @ts-expect-error a client has no pushes
    clientToHost.push("run.view", { subscriptionId: "s1", view });
    // @ts-expect-error a worker has no pushes
    workerToHost.push("cancel", { reason: "done" });
    expectTypeOf<Parameters<typeof workerToHost.push>>().toEqualTypeOf<never>();
  });

  it("narrow a push's data by its name", () => {
    const sink = (...[name, data]: PushArgs<typeof workerPushes>) => {
      if (name === "assign") expectTypeOf(data.launchId).toEqualTypeOf<string>();
      else expectTypeOf(data.reason).toEqualTypeOf<string>();
    };
    void sink;
  });

  it("name an invalid push by the receiver's table", () => {
    dispatchPushes(
      {} as typeof clientPushes,
      { "run.view": ({ view: received }) => expectTypeOf(received).toEqualTypeOf<RunView>() },
      (push) => expectTypeOf(push).toEqualTypeOf<"run.view">(),
    );
    // @ts-expect-error every receiver says what an invalid push means to it
    dispatchPushes({} as typeof workerPushes, { assign: () => {}, cancel: () => {} });
  });
});
