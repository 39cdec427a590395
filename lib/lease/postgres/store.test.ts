import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LeaseError } from "../errors";
import { describeLeaseStoreContract } from "../testing/contract";
import { freshPgSchema, TEST_DATABASE_URL } from "../testing/isolation";
import { MIGRATIONS } from "./migrations";
import { PostgresLeaseStore } from "./store";

describeLeaseStoreContract("postgres", async () => {
  const fresh = freshPgSchema();
  const store = new PostgresLeaseStore({ name: "pg-test", connectionString: fresh.connectionString, schema: fresh.schema });
  await store.migrate();
  return {
    store,
    cleanup: async () => {
      await store.close();
      await fresh.drop();
    },
  };
});
