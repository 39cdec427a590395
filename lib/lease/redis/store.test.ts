import { createStoreFixture } from "@/test/support/stores";
import { describeLeaseStoreContract } from "../testing/contract";

describeLeaseStoreContract("redis", () => createStoreFixture("redis", { name: "redis-contract" }));
