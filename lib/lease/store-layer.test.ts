import { afterEach, describe, expect, it } from "vitest";
import { createStoreFixture, type StoreFixture } from "@/test/support/stores";
import { layerStore, refusingStore, STORE_METHODS, type StoreMethodName } from "./store-layer";
import type { LeaseStore, StoreKind } from "./types";

const ALL_METHODS = [
  ...Object.keys(STORE_METHODS.lock),
  ...Object.keys(STORE_METHODS.history),
  ...Object.keys(STORE_METHODS.analytics),
] as StoreMethodName[];

/** The inner store's methods that a store may omit (prefixStats, eventRetention, …), and which of them it has. */
function optionalMethodsOf(store: LeaseStore): { present: StoreMethodName[]; absent: StoreMethodName[] } {
  const optional = ALL_METHODS.filter((name) => ({ ...STORE_METHODS.lock, ...STORE_METHODS.history, ...STORE_METHODS.analytics })[name].optional);
  return {
    present: optional.filter((name) => typeof store[name] === "function"),
    absent: optional.filter((name) => typeof store[name] !== "function"),
  };
}

describe.each<StoreKind>(["postgres", "redis"])("a layer over a %s store", (kind) => {
  let fixture: StoreFixture | undefined;
  afterEach(async () => {
    await fixture?.cleanup();
    fixture = undefined;
  });

  it("forwards every method it does not override to the inner store, with its name and kind", async () => {
    fixture = await createStoreFixture(kind);
    const inner = fixture.store;
    const layered = layerStore(inner, {});
    expect(layered.name).toBe(inner.name);
    expect(layered.kind).toBe(kind);

    // A write through the layer is the inner store's: the same lease, seen from both.
    const taken = await layered.acquire({ resource: "layer:forward", owner: "o", task: "t", ttlMs: 10_000 });
    if (!taken.acquired) throw new Error("expected to acquire");
    expect(await inner.get("layer:forward")).toMatchObject({ leaseId: taken.lease.leaseId });
    expect(await layered.get("layer:forward")).toMatchObject({ leaseId: taken.lease.leaseId, fencingToken: taken.lease.fencingToken });
    expect((await layered.list({ prefix: "layer:" })).items.map((l) => l.resource)).toEqual(["layer:forward"]);
    expect(await layered.countActive()).toBe(1);
    // Every argument reaches the inner store: a limit of 1 over two leases pages.
    await layered.acquire({ resource: "layer:second", owner: "o", task: "t", ttlMs: 10_000 });
    const firstPage = await layered.list({ prefix: "layer:", limit: 1 });
    expect(firstPage.items).toHaveLength(1);
    expect(firstPage.nextCursor).toBeDefined();

    const released = await layered.release({ resource: "layer:forward", leaseId: taken.lease.leaseId });
    expect(released).toMatchObject({ released: true });
    const kinds = (await inner.events({ resource: "layer:forward", order: "asc" })).items.map((e) => e.kind);
    expect(kinds).toEqual(["acquired", "released"]);
    expect((await layered.health()).ok).toBe(true);
  });

  it("has exactly the optional methods the inner store has, overridden or not, and calls them on the inner store", async () => {
    fixture = await createStoreFixture(kind);
    const inner = fixture.store;
    const { present, absent } = optionalMethodsOf(inner);
    const forwarding = layerStore(inner, {});
    const overriding = layerStore(inner, {
      override: {
        connectionUsage: () => null,
        findUnservableEventFilter: () => null,
        eventRetention: async () => ({ retentionDays: null, retainedFrom: null }),
        forceReleasedEvent: async () => null,
        prefixStats: async () => ({ buckets: [], coveredFrom: null }),
      },
    });
    for (const layered of [forwarding, overriding]) {
      for (const name of present) expect(typeof layered[name], name).toBe("function");
      for (const name of absent) {
        expect(layered[name], name).toBeUndefined();
        expect(name in layered, name).toBe(false);
      }
    }
    // Methods that use the store's private state answer through the layer, even detached from it:
    // they run with the inner store as `this`.
    const { eventRetention, connectionUsage, get } = forwarding;
    expect(await eventRetention?.()).toEqual(await inner.eventRetention?.());
    expect(connectionUsage?.()).toEqual(inner.connectionUsage?.());
    expect(await get("layer:nothing")).toBeNull();
  });

  it("answers overridden methods itself and forwards the rest", async () => {
    fixture = await createStoreFixture(kind);
    const inner = fixture.store;
    const acquired: string[] = [];
    const layered = layerStore(inner, {
      override: {
        async acquire(input) {
          acquired.push(input.resource);
          return inner.acquire(input);
        },
        close: async () => {},
      },
    });
    const taken = await layered.acquire({ resource: "layer:override", owner: "o", task: "t", ttlMs: 10_000 });
    expect(taken.acquired).toBe(true);
    expect(acquired).toEqual(["layer:override"]);
    // The overridden close leaves the inner store open.
    await layered.close();
    expect(await inner.get("layer:override")).toMatchObject({ owner: "o" });
  });

  it("waits for beforeForward before each forwarded call, and a refusal there never reaches the inner store", async () => {
    fixture = await createStoreFixture(kind);
    const inner = fixture.store;
    let isReady = false;
    const gated = layerStore(inner, {
      beforeForward: async () => {
        if (!isReady) throw new Error("not ready");
      },
      override: { health: () => inner.health() },
    });
    await expect(gated.acquire({ resource: "layer:gated", owner: "o", task: "t", ttlMs: 10_000 })).rejects.toThrow("not ready");
    expect(await inner.get("layer:gated")).toBeNull();
    expect((await gated.health()).ok).toBe(true);
    isReady = true;
    expect((await gated.acquire({ resource: "layer:gated", owner: "o", task: "t", ttlMs: 10_000 })).acquired).toBe(true);
  });

  it("exposes only the contract, not the inner store's other members", async () => {
    fixture = await createStoreFixture(kind);
    const layered = layerStore(fixture.store, {});
    const members = Object.keys(layered).sort();
    expect(members.every((m) => m === "name" || m === "kind" || (ALL_METHODS as string[]).includes(m))).toBe(true);
    expect("migrate" in layered).toBe(false);
  });
});

describe("a refusing store", () => {
  it("rejects every asynchronous method with the refusal, and layers over it answer what they override", async () => {
    const refused = refusingStore({ name: "broken", kind: "redis" }, () => new Error("store is unavailable"));
    const store = layerStore(refused, { override: { close: async () => {} } });
    expect(store.name).toBe("broken");
    await expect(store.acquire({ resource: "r", owner: "o", task: "t", ttlMs: 1_000 })).rejects.toThrow("store is unavailable");
    await expect(store.list()).rejects.toThrow("store is unavailable");
    await expect(store.prefixStats!({ prefix: "a:", from: new Date(0), to: new Date(), bucketMs: 3_600_000 })).rejects.toThrow("store is unavailable");
    await expect(store.health()).rejects.toThrow("store is unavailable");
    await expect(store.close()).resolves.toBeUndefined();
    // Synchronous methods it cannot answer are left out, as a store without them would.
    expect(store.findUnservableEventFilter).toBeUndefined();
    expect(store.connectionUsage).toBeUndefined();
  });
});
