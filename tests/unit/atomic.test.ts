// lib/sys/atomic.ts: atomic replace with backup, durable appends, stale temp files.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, linkSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { appendLineDurable, atomicWriteFile, removeStaleTemps, tempPathFor } from "../../lib/sys/atomic.ts";
import { MamError } from "../../lib/sys/errors.ts";
import { makeSandbox, type Sandbox } from "../helpers/sandbox.ts";

let sb: Sandbox;
let dir: string;
beforeEach(() => {
  sb = makeSandbox("mam-at-");
  dir = sb.ws;
});
afterEach(() => sb.cleanup());

describe("atomicWriteFile", () => {
  test("new file: content, mode 0600 by default, no temp file left", () => {
    const p = join(dir, "f.json");
    atomicWriteFile(p, "one\n");
    expect(readFileSync(p, "utf8")).toBe("one\n");
    expect(statSync(p).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir)).toEqual(["f.json"]);
  });

  test("replaces by rename (a new inode), keeps the old file's mode, or takes an explicit one", () => {
    const p = join(dir, "f");
    writeFileSync(p, "old");
    chmodSync(p, 0o644);
    const ino = statSync(p).ino;
    atomicWriteFile(p, Buffer.from("new"));
    expect(readFileSync(p, "utf8")).toBe("new");
    expect(statSync(p).ino).not.toBe(ino);
    expect(statSync(p).mode & 0o777).toBe(0o644);
    atomicWriteFile(p, "newer", { mode: 0o640 });
    expect(statSync(p).mode & 0o777).toBe(0o640);
  });

  test("the old version becomes the backup (replacing an older backup); no backup when there was no file", () => {
    const p = join(dir, "reg.yaml");
    const b = `${p}.bak`;
    atomicWriteFile(p, "v1", { backupPath: b });
    expect(existsSync(b)).toBe(false);
    atomicWriteFile(p, "v2", { backupPath: b });
    expect(readFileSync(b, "utf8")).toBe("v1");
    atomicWriteFile(p, "v3", { backupPath: b });
    expect(readFileSync(b, "utf8")).toBe("v2");
    expect(readFileSync(p, "utf8")).toBe("v3");
    expect(readdirSync(dir).sort()).toEqual(["reg.yaml", "reg.yaml.bak"]);
  });

  test("a failure leaves the old file as it was and no temp file", () => {
    const p = join(dir, "f");
    writeFileSync(p, "keep");
    let e: unknown;
    try {
      atomicWriteFile(p, "x", { backupPath: join(dir, "no-such-folder", "f.bak") });
    } catch (x) {
      e = x;
    }
    expect(e).toBeInstanceOf(MamError);
    expect((e as MamError).message).toStartWith(`cannot write ${p}: `);
    expect(readFileSync(p, "utf8")).toBe("keep");
    expect(readdirSync(dir)).toEqual(["f"]);
  });

  test("temp names: .<name>.<pid>.<random>.tmp in the same folder", () => {
    const t = tempPathFor(join(dir, "agent-sessions.yaml"));
    expect(t.startsWith(join(dir, `.agent-sessions.yaml.${process.pid}.`))).toBe(true);
    expect(t.endsWith(".tmp")).toBe(true);
    expect(tempPathFor("/x/y")).not.toBe(tempPathFor("/x/y"));
  });
});

describe("appendLineDurable", () => {
  test("appends whole lines, adds the newline, creates the file with the mode", () => {
    const p = join(dir, "j.ndjson");
    appendLineDurable(p, '{"a":1}');
    appendLineDurable(p, '{"b":2}\n', 0o644);
    expect(readFileSync(p, "utf8")).toBe('{"a":1}\n{"b":2}\n');
    expect(statSync(p).mode & 0o777).toBe(0o600);
  });

  test("refuses a line with a newline inside", () => {
    expect(() => appendLineDurable(join(dir, "j"), "a\nb")).toThrow("the line contains a newline");
    expect(existsSync(join(dir, "j"))).toBe(false);
  });

  test("concurrent appenders never interleave inside a line", async () => {
    const p = join(dir, "j.ndjson");
    const script = `import { appendLineDurable } from ${JSON.stringify(join(import.meta.dir, "../../lib/sys/atomic.ts"))};
      const id = process.argv[2]; for (let i = 0; i < 50; i++) appendLineDurable(process.argv[3], JSON.stringify({ id, i, pad: "x".repeat(3000) }));`;
    const f = join(sb.root, "appender.ts");
    writeFileSync(f, script);
    const ps = [1, 2, 3, 4].map((id) => Bun.spawn([process.execPath, f, String(id), p], { stdout: "ignore", stderr: "inherit" }));
    expect(await Promise.all(ps.map((x) => x.exited))).toEqual([0, 0, 0, 0]);
    const lines = readFileSync(p, "utf8").trimEnd().split("\n");
    expect(lines.length).toBe(200);
    for (const l of lines) expect(JSON.parse(l).pad.length).toBe(3000);
  });
});

describe("removeStaleTemps", () => {
  test("removes temps of dead writers and old ones; keeps fresh ones of live writers and other files", () => {
    const name = "agent-sessions.yaml";
    const dead = join(dir, `.${name}.999999999.abc.tmp`);
    const mine = join(dir, `.${name}.${process.pid}.abc.tmp`);
    const live = join(dir, `.${name}.1.abc.tmp`); // pid 1 is always alive
    const old = join(dir, `.${name}.1.def.tmp`);
    const other = join(dir, `.other.999999999.abc.tmp`);
    const notTemp = join(dir, `.${name}.999999999.abc`);
    for (const p of [dead, mine, live, old, other, notTemp]) writeFileSync(p, "x");
    const past = new Date(Date.now() - 120_000);
    utimesSync(old, past, past);
    const removed = removeStaleTemps(dir, name);
    expect(removed.sort()).toEqual([dead, old].sort());
    for (const p of [mine, live, other, notTemp]) expect(existsSync(p)).toBe(true);
  });

  test("a missing folder is nothing to clean", () => {
    expect(removeStaleTemps(join(dir, "nope"), "x")).toEqual([]);
  });

  test("hard links keep the backup whole: the backup is the old inode", () => {
    // sanity check of the mechanism atomicWriteFile relies on
    const a = join(dir, "a");
    writeFileSync(a, "old");
    linkSync(a, join(dir, "b"));
    atomicWriteFile(a, "new");
    expect(readFileSync(join(dir, "b"), "utf8")).toBe("old");
  });
});
