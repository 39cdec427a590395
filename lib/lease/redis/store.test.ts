import { describeLeaseStoreContract } from "../testing/contract";
import { freshRedisNamespace, TEST_REDIS_URL } from "../testing/isolation";
import { RedisLeaseStore } from "./store";

describeLeaseStoreContract("redis", async () => {
  const fresh = freshRedisNamespace(TEST_REDIS_URL);
  const store = new RedisLeaseStore({ name: "redis-contract", url: fresh.url, namespace: fresh.namespace });
  return {
    store,
    cleanup: async () => {
      await store.close();
      await fresh.drop();
    },
  };
});
