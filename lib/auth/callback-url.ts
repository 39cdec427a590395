/**
 * Where a sign-in may send the browser afterwards: only a path on this console.
 * The value is parsed with `new URL` against the console's own URL and must keep
 * its origin. Control characters and backslashes are refused before parsing,
 * because URL parsers drop or reinterpret them (`/\t/evil` parses as `//evil`,
 * `/\evil` as `//evil` in browsers) — also once percent-decoded.
 */

const FORBIDDEN = /[\u0000-\u001f\u007f-\u009f\\]/;

function decodeOnce(value: string): string | null {
  try {
    return decodeURIComponent(value);
  } catch {
    return null;
  }
}

/** A same-origin `path?query#hash`, or `fallback` when `value` is anything else. */
export function toSafeCallbackPath(value: string | null | undefined, consoleUrl: string, fallback = "/"): string {
  if (!value || value.length > 2048) return fallback;
  const decoded = decodeOnce(value);
  if (decoded === null || FORBIDDEN.test(value) || FORBIDDEN.test(decoded)) return fallback;
  let base: URL;
  let url: URL;
  try {
    base = new URL(consoleUrl);
    url = new URL(value, base);
  } catch {
    return fallback;
  }
  if (url.origin !== base.origin || (url.protocol !== "http:" && url.protocol !== "https:")) return fallback;
  const path = `${url.pathname}${url.search}${url.hash}`;
  // "/.//evil" normalises to "//evil", which a browser would read as another host.
  if (!path.startsWith("/") || path.startsWith("//")) return fallback;
  return path;
}
