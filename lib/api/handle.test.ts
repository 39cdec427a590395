import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { decodeHandle, encodeHandle, HandleCodec } from "./handle";

const key = randomBytes(32);
const payload = (n: number) => ({ store: "redis", resource: `ten:r${n}`, leaseId: `lease-${n}`, ttlMs: 5_000 + n, tokenId: `token-${n % 3}` });

describe("HandleCodec: remembering handles changes no answer", () => {
  it("issues the handles encodeHandle does, and decodes remembered, forgotten and foreign ones as decodeHandle does", () => {
    const codec = new HandleCodec(key, 4);
    const handles = Array.from({ length: 10 }, (_, n) => codec.encode(payload(n)));
    handles.forEach((handle, n) => expect(handle).toBe(encodeHandle(key, payload(n))));
    // Only the last 4 are remembered; the others, and forgotten ones, are verified again.
    codec.forget(handles[9]!);
    handles.forEach((handle, n) => expect(codec.decode(handle)).toEqual(payload(n)));
    // Issued with another key (another deployment), edited or truncated: refused, remembered or not.
    const foreign = encodeHandle(randomBytes(32), payload(1));
    const edited = handles[8]!.replace(/^./, (c) => (c === "A" ? "B" : "A"));
    for (const bad of [foreign, edited, handles[8]!.slice(0, -1), `${handles[8]!}x`, "", "garbage"]) {
      expect(codec.decode(bad)).toBeNull();
      expect(decodeHandle(key, bad)).toBeNull();
    }
    // A handle from another replica sharing the key is authentic here too.
    expect(new HandleCodec(key).decode(handles[2]!)).toEqual(payload(2));
  });
});
