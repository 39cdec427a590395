/**
 * Who a signed-in person is, as the console records it (events, audit entries,
 * API tokens' creator, rate limits).
 *
 * The identity is the IdP's `sub`, which is unique and never reassigned within
 * one issuer (OpenID Connect Core §2), qualified by that issuer: `<issuer>#<sub>`.
 * An issuer URL has no fragment, so the pair reads back unambiguously.
 *
 * The email is only a label, and only when the IdP says it verified it: an
 * unverified `email` claim is whatever the account holder typed, possibly
 * someone else's address. Framework-free, so pages and tests can use it.
 */

/** The console's stable id for the person `subject` at `issuer`. */
export function identityId(issuer: string, subject: string): string {
  return `${issuer}#${subject}`;
}

/** The IdP's `sub` part of an id made by identityId; null for anything else (e.g. an email recorded before stable ids). */
export function subjectOfIdentity(id: string): string | null {
  const match = /^https?:\/\/[^#\s]+#(.+)$/s.exec(id);
  return match ? match[1]! : null;
}

/** The `email` claim when the IdP vouches for it (`email_verified` true; some IdPs send the string "true"), else null. */
export function verifiedEmailOf(claims: Record<string, unknown>): string | null {
  const email = claims.email;
  const verified = claims.email_verified === true || claims.email_verified === "true";
  return verified && typeof email === "string" && email !== "" ? email : null;
}

/** What a person is shown as: the verified email, else the name, else the subject. The stable id goes alongside (title, secondary line). */
export function identityLabel(who: { id: string; email: string | null; name?: string | null }): string {
  return who.email ?? who.name ?? subjectOfIdentity(who.id) ?? who.id;
}
