"use client";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { DataTable, TBody, THead, Td, Th, Tr } from "@/components/ui/data-table";
import { EmptyState } from "@/components/ui/empty-state";
import { RelativeTime } from "@/components/ui/relative-time";
import { StatusPill } from "@/components/ui/status-pill";
import type { Tone } from "@/components/ui/badge";
import type { ApiTokenState, ApiTokenView, CreateTokenResult } from "@/lib/console/tokens/token-types";
import { PRIMARY_BUTTON, tokenAuditHref, type TokenAccess } from "./access";
import { CreateTokenForm } from "./create-token-form";
import { NewTokenSecret } from "./new-token-secret";
import { RevokeTokenDialog } from "./revoke-token-dialog";
import { subjectOfIdentity } from "@/lib/auth/identity";

const STATE_STYLE: Record<ApiTokenState, { tone: Tone; title: string }> = {
  live: { tone: "green", title: "Accepted by the lock API until it expires" },
  expired: { tone: "amber", title: "Past its expiry: refused by the lock API" },
  revoked: { tone: "red", title: "Revoked: refused by the lock API" },
};

type Created = Extract<CreateTokenResult, { ok: true }>;

/** A scope for display: "tenant_1:*, tenant_2:*". */
function scopeText(prefixes: readonly string[]): string {
  return prefixes.map((p) => `${p}*`).join(", ");
}

/**
 * `listScope`: the prefixes this viewer's token list is limited to (null: every token).
 * `createScope`: the prefixes new tokens must stay within (null: anywhere).
 */
export function TokensClient({
  tokens,
  storeNames,
  access,
  listScope,
  createScope,
}: {
  tokens: ApiTokenView[];
  storeNames: string[];
  access: TokenAccess;
  listScope: string[] | null;
  createScope: string[] | null;
}) {
  const router = useRouter();
  const [isFormOpen, setFormOpen] = useState(false);
  const [created, setCreated] = useState<Created | null>(null);
  const [revoking, setRevoking] = useState<ApiTokenView | null>(null);
  const [notice, setNotice] = useState<{ text: string; auditId: string } | null>(null);

  return (
    <div className="space-y-4">
      <div className="flex flex-wrap items-start justify-between gap-2">
        <div>
          <h1 className="text-lg font-semibold tracking-tight">API tokens</h1>
          <p className="max-w-3xl text-sm text-zinc-600 dark:text-zinc-400">
            Bearer tokens for the lock API (<code className="font-mono">npm run api</code>): each reaches only its tenant prefixes, stores and actions, and expires. Only a hash
            is stored. Every create and revoke, allowed or refused, is in the{" "}
            {listScope ? (
              // A tenant-scoped reader's /audit keeps to lease entries under their prefixes: token entries are not there.
              <>audit log, where accounts without a tenant scope read it</>
            ) : (
              <Link className="underline" href="/audit?action=token_create">
                audit log
              </Link>
            )}
            .
          </p>
          {listScope ? (
            <p data-testid="tokens-scope" className="mt-1 max-w-3xl text-sm text-zinc-600 dark:text-zinc-400">
              Your access covers <code className="font-mono">{scopeText(listScope)}</code>: only tokens whose every prefix lies within it are listed
              {createScope ? ", and new tokens must stay within it" : ""}.
            </p>
          ) : null}
        </div>
        {access.canManage ? (
          <button
            type="button"
            className={PRIMARY_BUTTON}
            disabled={isFormOpen}
            onClick={() => {
              setFormOpen(true);
              setCreated(null);
              setNotice(null);
            }}
          >
            New token
          </button>
        ) : (
          <div className="flex items-center gap-2">
            <span id="tokens-why-not" className="text-xs text-zinc-600 dark:text-zinc-400">
              {access.reason}
            </span>
            <button type="button" disabled aria-describedby="tokens-why-not" className={PRIMARY_BUTTON}>
              New token
            </button>
          </div>
        )}
      </div>

      {created ? <NewTokenSecret secret={created.secret} token={created.token} auditId={created.auditId} auditLink={!listScope} onDone={() => setCreated(null)} /> : null}
      {isFormOpen && access.canManage ? (
        <CreateTokenForm
          storeNames={storeNames}
          scopePrefixes={createScope}
          onCancel={() => setFormOpen(false)}
          onCreated={(result) => {
            setFormOpen(false);
            setCreated(result);
            router.refresh();
          }}
        />
      ) : null}
      <p role="status" className="text-sm text-emerald-800 dark:text-emerald-300">
        {notice ? (
          <>
            {notice.text}{" "}
            {listScope ? (
              <>Audit entry {notice.auditId}.</>
            ) : (
              <Link className="underline" href={tokenAuditHref("token_revoke", notice.auditId)}>
                Audit entry {notice.auditId}
              </Link>
            )}
          </>
        ) : null}
      </p>

      {tokens.length === 0 ? (
        <EmptyState title={listScope ? `No API tokens within ${scopeText(listScope)} yet` : "No API tokens yet"}>
          {access.canManage ? (
            <>
              Choose <strong>New token</strong> to let a worker in any language take leases over HTTP, limited to one tenant&apos;s prefixes. The CLI does the same:{" "}
              <code className="whitespace-nowrap font-mono">npm run api:token -- create</code>.
            </>
          ) : (
            <>An operator creates them here or with <code className="whitespace-nowrap font-mono">npm run api:token -- create</code>.</>
          )}
        </EmptyState>
      ) : (
        <TokenTable tokens={tokens} access={access} onRevoke={setRevoking} />
      )}

      {revoking ? (
        <RevokeTokenDialog
          token={revoking}
          onClose={() => setRevoking(null)}
          onRevoked={(result) => {
            setRevoking(null);
            setNotice({ text: `Token ${result.token.name} revoked: the lock API refuses it from now on.`, auditId: result.auditId });
            router.refresh();
          }}
        />
      ) : null}
    </div>
  );
}

function TokenTable({ tokens, access, onRevoke }: { tokens: ApiTokenView[]; access: TokenAccess; onRevoke: (token: ApiTokenView) => void }) {
  return (
    <DataTable caption="API tokens, newest first">
      <THead>
        <tr>
          <Th>Name</Th>
          <Th>State</Th>
          <Th>Prefixes</Th>
          <Th>Stores</Th>
          <Th>Actions</Th>
          <Th>Created</Th>
          <Th>Expires</Th>
          <Th align="right">
            <span className="sr-only">Revoke</span>
          </Th>
        </tr>
      </THead>
      <TBody>
        {tokens.map((token) => (
          <Tr key={token.id} rowKey={token.id}>
            <Td mono className="max-w-44 truncate" title={`id ${token.id}`}>
              {token.name}
            </Td>
            <Td>
              <StatusPill tone={STATE_STYLE[token.state].tone} label={token.state} title={STATE_STYLE[token.state].title} />
            </Td>
            <Td mono className="max-w-52 truncate" title={token.prefixes.join(" ")}>
              {token.prefixes.join(" ")}
            </Td>
            <Td mono className="max-w-36 truncate" title={token.stores.join(", ")}>
              {token.stores.join(", ")}
            </Td>
            <Td mono className="max-w-52 truncate" title={`${token.actions.join(", ")} · ${token.ratePerSec}/s, ${token.maxConcurrent} concurrent`}>
              {token.actions.join(", ")}
            </Td>
            <Td>
              <RelativeTime value={token.createdAt} />
              <span className="block max-w-40 truncate font-mono text-[11px] text-zinc-600 dark:text-zinc-400" title={token.createdBy}>
                by {subjectOfIdentity(token.createdBy) ?? token.createdBy}
              </span>
            </Td>
            <Td>
              {token.revokedAt ? (
                <span className="text-zinc-600 dark:text-zinc-400">
                  revoked <RelativeTime value={token.revokedAt} />
                </span>
              ) : (
                <RelativeTime value={token.expiresAt} />
              )}
            </Td>
            <Td align="right">
              {token.state === "revoked" ? null : (
                <button
                  type="button"
                  disabled={!access.canManage}
                  title={access.canManage ? undefined : access.reason}
                  aria-label={`Revoke ${token.name}`}
                  onClick={() => onRevoke(token)}
                  className="rounded-md border border-red-300 px-2 py-0.5 text-xs font-medium text-red-800 hover:bg-red-50 disabled:cursor-not-allowed disabled:border-zinc-300 disabled:text-zinc-500 disabled:hover:bg-transparent dark:border-red-800 dark:text-red-300 dark:hover:bg-red-950 dark:disabled:border-zinc-700 dark:disabled:text-zinc-400"
                >
                  Revoke
                </button>
              )}
            </Td>
          </Tr>
        ))}
      </TBody>
    </DataTable>
  );
}
