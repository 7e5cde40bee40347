// Canonical JSON and event signatures must be byte-identical to the Python reference
// (json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False), hmac/sha256).
import { describe, expect, test } from "bun:test";
import { canonicalJson, CanonicalJsonError, compareCodePoints } from "../../lib/jobs/canonical.ts";
import { signature, type JobEvent } from "../../lib/jobs/event.ts";

const PY = `
import sys, json, hmac, hashlib
cases = json.loads(sys.stdin.buffer.read().decode("utf-8"))
out = []
for c in cases:
    text = json.dumps(c["value"], sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    sig = hmac.new(c["key"].encode("utf-8"), text.encode("utf-8"), hashlib.sha256).hexdigest()
    out.append({"hex": text.encode("utf-8").hex(), "sig": sig})
sys.stdout.write(json.dumps(out))
`;

function python(cases: { value: unknown; key: string }[]): { hex: string; sig: string }[] {
  const r = Bun.spawnSync(["python3", "-c", PY], { stdin: Buffer.from(JSON.stringify(cases), "utf8") });
  if (r.exitCode !== 0) throw new Error(`python3 failed (exit ${r.exitCode}, signal ${r.signalCode ?? "none"}): ${r.stderr}`);
  return JSON.parse(r.stdout.toString());
}

const tricky: unknown[] = [
  {},
  [],
  { a: {}, b: [], c: [{}], d: [[]] },
  { z: 1, a: 2, m: { y: [3, 2, 1], b: { d: 0, c: -0 } } },
  { s: "héllo wörld — 中文 — emoji 😀 — combining é" },
  { s: 'quote " backslash \\ slash / tab \t newline \n cr \r bs \b ff \f' },
  { s: "\u0000\u0001\u0007\u000b\u000e\u001f\u007f\u0080\u009f" },
  { s: "line sep \u2028 para sep \u2029 bom \ufeff nbsp \u00a0" },
  { "\ufffd": 1, "😀": 2, "\uffff": 3, "\ue000": 4, a: 5, "é": 6, Z: 7, "": 8 },
  { nested: { deeper: { deepest: { list: [1, "two", null, true, false, { k: "v" }] } } } },
  { big: 9007199254740991, neg: -9007199254740991, zero: 0 },
  { "key with spaces": " ", "key\nnewline": "v", "ключ": "значение" },
  [1, [2, [3, [4, []]]], {}],
  "just a string ☃",
  123,
  null,
  true,
];

describe("canonicalJson", () => {
  test("is byte-identical to python3 json.dumps(sort_keys, compact, ensure_ascii=False)", () => {
    const py = python(tricky.map((value) => ({ value, key: "k" })));
    tricky.forEach((v, i) => {
      expect(Buffer.from(canonicalJson(v), "utf8").toString("hex")).toBe(py[i]!.hex);
    });
  });

  test("sorts keys by code point, not UTF-16 unit (astral after U+FFFF)", () => {
    expect(compareCodePoints("\uffff", "😀")).toBeLessThan(0);
    expect(["😀", "\uffff", "a"].sort()).toEqual(["a", "😀", "\uffff"]); // the JS default is wrong
    expect(["😀", "\uffff", "a"].sort(compareCodePoints)).toEqual(["a", "\uffff", "😀"]);
    expect(canonicalJson({ "😀": 1, "\uffff": 2 })).toBe('{"\uffff":2,"😀":1}');
  });

  test("rejects floats, unsafe integers, lone surrogates and non-JSON values", () => {
    for (const bad of [{ x: 1.5 }, [0.1], { n: 2 ** 53 }, { n: Number.NaN }, { n: Infinity }, { s: "\ud800" }, { ["\udc00"]: 1 }, { u: undefined }, { f: () => 1 }, new Date(0), { m: new Map() }]) {
      expect(() => canonicalJson(bad)).toThrow(CanonicalJsonError);
    }
    expect(canonicalJson({ x: 1.0 })).toBe('{"x":1}');
  });
});

describe("event signature", () => {
  test("matches python3 hmac-sha256 over the canonical payload without hmac_sig", () => {
    const ev: JobEvent = {
      schema_version: 1,
      seq: 7,
      job_id: "abc12345",
      event: "progress",
      timestamp: "2026-06-19T09:32:00Z",
      detail: "naïve \"quoted\" 😀\nline two",
      source: "worker-1",
      data: { files: 3, nested: { b: [1, 2], a: {} }, hmac_sig: "ignored" },
    };
    const key = "tökén-ßecret_base64url-AAAA";
    const { hmac_sig: _s, ...data } = ev.data;
    const [py] = python([{ value: { ...ev, data }, key }]);
    expect(signature(ev, key)).toBe(py!.sig);
  });
});
