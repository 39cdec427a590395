/**
 * A store fixture for the enclosing describe block: created before its tests and cleaned up
 * after them. Read its `spec`, `store` and `open()` inside the tests (not while collecting).
 */
import { afterAll, beforeAll } from "vitest";
import type { StoreKind } from "@leasewatch/lease";
import { createStoreFixture, type StoreFixture, type StoreFixtureSetup } from "./stores";

/** `hookTimeoutMs`: for a set-up or clean-up slower than vitest's hook timeout (a namespace of many keys to drop). */
export function setUpStoreFixture<K extends StoreKind>(kind: K, setup?: StoreFixtureSetup<K> & { hookTimeoutMs?: number }): StoreFixture<K> {
  let fixture: StoreFixture<K> | undefined;
  beforeAll(async () => {
    fixture = await createStoreFixture(kind, setup);
  }, setup?.hookTimeoutMs);
  afterAll(async () => {
    await fixture?.cleanup();
  }, setup?.hookTimeoutMs);
  const current = (): StoreFixture<K> => {
    if (!fixture) throw new Error("the store fixture is created in beforeAll: use it inside a test");
    return fixture;
  };
  return {
    get spec() {
      return current().spec;
    },
    get store() {
      return current().store;
    },
    open: (overrides) => current().open(overrides),
    cleanup: () => current().cleanup(),
  };
}
