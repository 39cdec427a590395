import type { LeaseAnalytics, LeaseHistory, LeaseStore, LockStore, StoreIdentity } from "./types";

/** The methods of the store contract (everything but `name` and `kind`). */
export type StoreMethodName = Exclude<keyof LeaseStore, keyof StoreIdentity>;
export type StoreMethods = Pick<LeaseStore, StoreMethodName>;

type Part<Methods> = {
  readonly [K in Exclude<keyof Methods, keyof StoreIdentity>]-?: {
    /** Optional methods are ones a store may omit; callers test for them. */
    readonly optional: object extends Pick<Methods, K> ? true : false;
    /** Answers at once, without reading the store (a layer cannot make it wait). */
    readonly sync: boolean;
  };
};

/**
 * Every method of the contract, by part. Typed against the interfaces, so a method added to one of
 * them must be listed here (with whether a store may omit it) before anything compiles.
 */
export const STORE_METHODS: {
  readonly lock: Part<LockStore>;
  readonly history: Part<LeaseHistory>;
  readonly analytics: Part<LeaseAnalytics>;
} = {
  lock: {
    acquire: { optional: false, sync: false },
    renew: { optional: false, sync: false },
    release: { optional: false, sync: false },
    forceRelease: { optional: false, sync: false },
    get: { optional: false, sync: false },
    sweep: { optional: false, sync: false },
    reportFencingRejection: { optional: false, sync: false },
    reportLost: { optional: false, sync: false },
    health: { optional: false, sync: false },
    close: { optional: false, sync: false },
    connectionUsage: { optional: true, sync: true },
  },
  history: {
    list: { optional: false, sync: false },
    events: { optional: false, sync: false },
    findUnservableEventFilter: { optional: true, sync: true },
    heldAt: { optional: false, sync: false },
    eventRetention: { optional: true, sync: false },
    forceReleasedEvent: { optional: true, sync: false },
  },
  analytics: {
    stats: { optional: false, sync: false },
    prefixStats: { optional: true, sync: false },
    countActive: { optional: false, sync: false },
    lifetimeTotals: { optional: false, sync: false },
    groupTotals: { optional: false, sync: false },
    renewalSlack: { optional: false, sync: false },
    ttlAdvice: { optional: false, sync: false },
  },
};

const METHODS: ReadonlyArray<readonly [StoreMethodName, { optional: boolean; sync: boolean }]> = [
  ...Object.entries(STORE_METHODS.lock),
  ...Object.entries(STORE_METHODS.history),
  ...Object.entries(STORE_METHODS.analytics),
] as ReadonlyArray<readonly [StoreMethodName, { optional: boolean; sync: boolean }]>;

type AnyMethod = (...args: unknown[]) => unknown;

/** What a layer changes about the store it wraps. */
export interface StoreLayer {
  /**
   * Methods the layer answers itself (calling the inner store as it sees fit). An override of an
   * optional method applies only when the inner store has that method: the layered store lacks
   * whatever the inner store lacks.
   */
  override?: Partial<StoreMethods>;
  /**
   * Awaited before each asynchronous call the layer forwards (not before overrides, nor before
   * the synchronous methods); a rejection rejects the call without reaching the inner store.
   */
  beforeForward?: () => Promise<void>;
}

/**
 * `inner` with `layer` over it: the layer's overrides, and every other method of the contract
 * forwarded unchanged (same arguments, called on the inner store so its `this` holds). Only the
 * contract is exposed: other members of the inner store (`migrate`, `project`) are not.
 */
export function layerStore(inner: LeaseStore, layer: StoreLayer): LeaseStore {
  const store: Record<string, unknown> = {};
  Object.defineProperties(store, {
    name: { get: () => inner.name, enumerable: true },
    kind: { get: () => inner.kind, enumerable: true },
  });
  const innerMethods = inner as unknown as Record<StoreMethodName, AnyMethod | undefined>;
  const overrides = (layer.override ?? {}) as Partial<Record<StoreMethodName, AnyMethod>>;
  const before = layer.beforeForward;
  for (const [name, { optional, sync }] of METHODS) {
    if (optional && typeof innerMethods[name] !== "function") continue;
    const override = overrides[name];
    if (override) store[name] = override;
    else if (sync || !before) store[name] = (...args: unknown[]) => innerMethods[name]!.apply(inner, args);
    else store[name] = async (...args: unknown[]) => {
      await before();
      return innerMethods[name]!.apply(inner, args);
    };
  }
  return store as unknown as LeaseStore;
}

/**
 * A store with nothing behind it (one that could not be built): every asynchronous method of the
 * contract, optional ones included, rejects with `refusal()`. Layer over it for the methods that
 * should answer anyway.
 */
export function refusingStore(identity: StoreIdentity, refusal: () => Error): LeaseStore {
  const store: Record<string, unknown> = { name: identity.name, kind: identity.kind };
  for (const [name, { sync }] of METHODS) {
    if (!sync) store[name] = () => Promise.reject(refusal());
  }
  return store as unknown as LeaseStore;
}
