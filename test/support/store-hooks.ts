/**
 * A real store with some operations wrapped, for client tests that need the
 * network's timing without a flaky network: a reply that arrives late, a
 * request that leaves late, or the error a store throws under a race that is
 * hard to force. Everything not overridden goes straight through.
 */
import type { LeaseStore } from "@leasewatch/lease";

export type StoreHooks = Partial<Pick<LeaseStore, "acquire" | "renew" | "release">>;

/** `store` with `hooks` in place of some operations; a hook gets the real store to call through. */
export function hookStore(store: LeaseStore, makeHooks: (real: LeaseStore) => StoreHooks): LeaseStore {
  const hooks = makeHooks(store);
  return new Proxy(store, {
    get(target, property, receiver) {
      if (typeof property === "string" && property in hooks) return hooks[property as keyof StoreHooks];
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** A monotonic test clock: real time plus an offset the test moves (a stall, a slow reply, a jump). */
export function createTestClock(): { now: () => number; advance: (ms: number) => void } {
  let offset = 0;
  return {
    now: () => performance.now() + offset,
    advance: (ms) => {
      offset += ms;
    },
  };
}
