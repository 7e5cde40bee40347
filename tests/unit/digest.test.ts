// lib/sys/digest.ts gives the same bytes node:crypto would (signatures made by an older mam, or by
// the other hosts of a team, must still verify).
import { describe, expect, test } from "bun:test";
import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { hmacSha256Hex, randomBytes, sameBytes, sha256Hex } from "../../lib/sys/digest.ts";

describe("digest without node:crypto", () => {
  const texts = ["", "abc", '{"job_id":"a1b2c3d4","detail":"ünïcode ✓ \\u0000"}', "x".repeat(10_000)];
  test("sha256Hex equals node's createHash", () => {
    for (const t of texts) expect(sha256Hex(t)).toBe(createHash("sha256").update(t).digest("hex"));
    const bytes = new Uint8Array([0, 1, 2, 255]);
    expect(sha256Hex(bytes)).toBe(createHash("sha256").update(bytes).digest("hex"));
  });
  test("hmacSha256Hex equals node's createHmac with a UTF-8 key", () => {
    for (const key of ["k", "tökén-ü", "a".repeat(200)]) {
      for (const t of texts) expect(hmacSha256Hex(key, t)).toBe(createHmac("sha256", Buffer.from(key, "utf8")).update(t, "utf8").digest("hex"));
    }
  });
  test("randomBytes: the length asked, not all the same", () => {
    expect(randomBytes(32).length).toBe(32);
    expect(randomBytes(16).toString("hex")).not.toBe(randomBytes(16).toString("hex"));
  });
  test("sameBytes: equality as timingSafeEqual says, a length mismatch is false", () => {
    const a = Buffer.from("abcdef");
    expect(sameBytes(a, Buffer.from("abcdef"))).toBe(timingSafeEqual(a, Buffer.from("abcdef")));
    expect(sameBytes(a, Buffer.from("abcdeg"))).toBe(false);
    expect(sameBytes(a, Buffer.from("abc"))).toBe(false);
  });
});
