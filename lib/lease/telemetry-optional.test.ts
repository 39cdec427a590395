import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createStoreFixture, type StoreFixture } from "@/test/support/stores";
import { LeaseClient } from "./client";

// As in an install without the optional peer: importing @opentelemetry/api fails.
vi.mock("@opentelemetry/api", () => {
  throw new Error("Cannot find module '@opentelemetry/api'");
});

describe("the library without @opentelemetry/api installed", () => {
  let fixture: StoreFixture;
  beforeEach(async () => {
    fixture = await createStoreFixture("redis");
  });
  afterEach(async () => {
    await fixture.cleanup();
  });

  it("takes, renews and releases leases as usual, recording nothing", async () => {
    const client = new LeaseClient(fixture.store, { owner: "w" });
    const ttlMs = 600;
    const value = await client.withLease("tenant_1:jobs:1", async ({ remainingMs }) => {
      // Past a heartbeat: a renewal went through the (absent) instrumentation too.
      await new Promise((resolve) => setTimeout(resolve, ttlMs / 2 + 100));
      return remainingMs() > 0;
    }, { task: "t", ttlMs });
    expect(value).toBe(true);
    expect(await fixture.store.get("tenant_1:jobs:1")).toBeNull();
  });
});
