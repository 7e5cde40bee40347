// bench area `pane-lock` (SPEC §10): `mam pane-lock acquire` on a free lock handed in as fd 9, a
// whole process, against `mam --version` (the floor of any mam command) in the same run, the two
// interleaved run by run so that the machine's load moves both alike; and the same flock taken
// by python3 as a reference.
import { existsSync, mkdtempSync, openSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { medP90, pct, type Row, timeProcess } from "./common.ts";

export function benchPaneLock(bin: string): Row[] {
  const dir = mkdtempSync(join(tmpdir(), "mam-bench-"));
  try {
    const fd = openSync(join(dir, "free.lock"), "a");
    const lock: number[] = [];
    const version: number[] = [];
    timeProcess([bin, "pane-lock", "acquire", "--fd", "9"], 3, fd, 0);
    timeProcess([bin, "--version"], 3, undefined, 0);
    for (let i = 0; i < 60; i++) {
      lock.push(...timeProcess([bin, "pane-lock", "acquire", "--fd", "9"], 1, fd, 0));
      version.push(...timeProcess([bin, "--version"], 1, undefined, 0));
    }
    const py = timeProcess([existsSync("/usr/bin/python3") ? "/usr/bin/python3" : "python3", "-c", "import fcntl; fcntl.flock(9, fcntl.LOCK_EX | fcntl.LOCK_NB); print('locked')"], 40, fd);
    const med = pct(lock, 50);
    const ratio = med / pct(version, 50);
    return [
      { what: "`mam pane-lock acquire` on a free lock, whole process (median / p90)", target: "≤ 15 ms median", measured: medP90(lock), ok: med <= 15 },
      {
        what: "the same against `mam --version`, whole processes interleaved in one run, 60 each: median / median (`--version` median / p90)",
        target: "≤ 1.1 ×",
        measured: `${ratio.toFixed(2)} × (${medP90(version)})`,
        ok: ratio <= 1.1,
      },
      { what: "reference: the same flock from python3 (median / p90)", target: "-", measured: medP90(py), ok: null },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
