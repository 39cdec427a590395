/**
 * The slice of `oidc-provider` (which ships no types) that scripts/oidc-provider.ts uses.
 */
declare module "oidc-provider" {
  import type { Server } from "node:http";

  export interface Account {
    accountId: string;
    claims(): Promise<Record<string, unknown>>;
  }

  export interface Grant {
    addOIDCScope(scope: string): void;
    addOIDCClaims(claims: string[]): void;
    save(): Promise<string>;
  }

  export interface KoaContextWithOIDC {
    oidc: {
      provider: Provider;
      client?: { clientId: string };
      session?: { accountId?: string; grantIdFor(clientId: string): string | undefined };
      result?: { consent?: { grantId?: string } };
    };
  }

  export interface Configuration {
    clients?: Array<Record<string, unknown>>;
    claims?: Record<string, string[]>;
    conformIdTokenClaims?: boolean;
    pkce?: { required?: (ctx: KoaContextWithOIDC, client: unknown) => boolean };
    cookies?: { keys?: string[] };
    ttl?: Record<string, number>;
    issueRefreshToken?: (ctx: KoaContextWithOIDC, client: { grantTypeAllowed(type: string): boolean }, code: unknown) => Promise<boolean>;
    rotateRefreshToken?: (ctx: KoaContextWithOIDC) => boolean;
    features?: Record<string, { enabled: boolean }>;
    findAccount?: (ctx: KoaContextWithOIDC, id: string) => Promise<Account | undefined>;
    loadExistingGrant?: (ctx: KoaContextWithOIDC) => Promise<Grant | undefined>;
  }

  export default class Provider {
    constructor(issuer: string, configuration?: Configuration);
    Grant: { new (init: { clientId: string; accountId: string }): Grant; find(id: string): Promise<Grant | undefined> };
    listen(port: number, host: string, callback?: () => void): Server;
  }
}
