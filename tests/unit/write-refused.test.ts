// A write the file system refuses (issue 23 item 18, newcomer trial #4): a read-only folder or one
// without permission is the user's to fix, so mam names what it could not write and the way out
// instead of an internal error.
import { describe, expect, test } from "bun:test";
import { EXIT, MamError, writeRefused } from "../../lib/sys/errors.ts";

describe("a write the file system refuses", () => {
  const sys = (code: string, path: string) => Object.assign(new Error(`${code}: …, mkdir '${path}'`), { code, path });

  test("read-only and permission errors name what could not be written and the way out", () => {
    const e = writeRefused(sys("EROFS", "/ro/ws/.mam"))!;
    expect(e).toBeInstanceOf(MamError);
    expect(e.exitCode).toBe(EXIT.FAIL);
    expect(e.render()).toBe("ERROR: cannot write /ro/ws/.mam (read-only file system); make it writable, or work in a folder you can write (cd there, or set MAM_WORKSPACE)");
    expect(writeRefused(sys("EACCES", "/x/.mam/agent-sessions.lock"), "/x/.mam")!.message).toBe("cannot write /x/.mam (permission denied)");
    expect(writeRefused(sys("EPERM", "/h/.local/state/mam/ui"))!.hint).toContain("per-user state");
  });

  test("anything else is not its business", () => {
    expect(writeRefused(sys("ENOENT", "/x"))).toBeUndefined();
    expect(writeRefused(new Error("boom"))).toBeUndefined();
    expect(writeRefused(Object.assign(new Error("x"), { code: "EROFS" }))).toBeUndefined(); // no path to name
  });
});
