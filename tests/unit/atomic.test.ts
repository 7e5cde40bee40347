// lib/sys/atomic.ts: atomic replace with backup, durable appends, stale temp files.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, linkSync, lstatSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
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

describe("never through a symbolic link, never anything but a regular file (BUG-5)", () => {
  const refusedLink = /^refusing to write through .*: it is a symbolic link$/;
  const refusedOther = /^refusing to write .*: it is not a regular file$/;
  const thrown = (fn: () => unknown): MamError => {
    try {
      fn();
    } catch (e) {
      expect(e).toBeInstanceOf(MamError);
      return e as MamError;
    }
    throw new Error("did not throw");
  };

  test("appendLineDurable through a link: refused, the target untouched (its unfinished last line too)", () => {
    const victim = join(sb.root, "victim");
    writeFileSync(victim, "l1\nl2-no-newline");
    const p = join(dir, "j.events.ndjson");
    symlinkSync(victim, p);
    const e = thrown(() => appendLineDurable(p, '{"seq":1}', { keepTail: () => false }));
    expect(e.message).toMatch(refusedLink);
    expect(e.message).toContain(p);
    expect(e.hint).toContain("replace the link");
    expect(readFileSync(victim, "utf8")).toBe("l1\nl2-no-newline");
    // a link to nothing is not created through either
    const q = join(dir, "k.events.ndjson");
    symlinkSync(join(sb.root, "nowhere"), q);
    expect(thrown(() => appendLineDurable(q, "x")).message).toMatch(refusedLink);
    expect(existsSync(join(sb.root, "nowhere"))).toBe(false);
  });

  test("a FIFO or a folder is refused at once (a FIFO would block the writer)", () => {
    const fifo = join(dir, "fifo");
    expect(Bun.spawnSync(["mkfifo", fifo]).exitCode).toBe(0);
    expect(thrown(() => appendLineDurable(fifo, "x")).message).toMatch(refusedOther);
    mkdirSync(join(dir, "d"));
    expect(thrown(() => appendLineDurable(join(dir, "d"), "x")).message).toMatch(/^(refusing to write .*: it is not a regular file|cannot append to .*)$/);
  });

  test("atomicWriteFile with regularOnly: a link is refused and stays a link; without it the link is replaced, never written through", () => {
    const target = join(sb.root, "target");
    writeFileSync(target, "theirs");
    chmodSync(target, 0o644);
    const p = join(dir, "agent-sessions.yaml");
    symlinkSync(target, p);
    expect(thrown(() => atomicWriteFile(p, "ours", { regularOnly: true })).message).toMatch(refusedLink);
    expect(lstatSync(p).isSymbolicLink()).toBe(true);
    expect(readFileSync(target, "utf8")).toBe("theirs");
    atomicWriteFile(p, "ours");
    expect(lstatSync(p).isFile()).toBe(true);
    expect(readFileSync(target, "utf8")).toBe("theirs");
  });

  test("a lock file that is a link to a missing path: refused, the path is not created", async () => {
    const { withLock } = await import("../../lib/sys/lock-file.ts");
    const p = join(dir, ".lock");
    symlinkSync(join(sb.root, "made-by-mam"), p);
    await expect(withLock(p, "jobs", 1000, () => 1)).rejects.toThrow(refusedLink);
    expect(existsSync(join(sb.root, "made-by-mam"))).toBe(false);
  });
});
