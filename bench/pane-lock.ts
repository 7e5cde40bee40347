// bench area `pane-lock` (SPEC §10): `mam pane-lock acquire` on a free lock handed in as fd 9, a
// whole process, against the same flock taken by python3 as a reference.
import { existsSync, mkdtempSync, openSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { medP90, pct, type Row, timeProcess } from "./common.ts";

export function benchPaneLock(bin: string): Row[] {
  const dir = mkdtempSync(join(tmpdir(), "mam-bench-"));
  try {
    const fd = openSync(join(dir, "free.lock"), "a");
    const t = timeProcess([bin, "pane-lock", "acquire", "--fd", "9"], 40, fd);
    const py = timeProcess([existsSync("/usr/bin/python3") ? "/usr/bin/python3" : "python3", "-c", "import fcntl; fcntl.flock(9, fcntl.LOCK_EX | fcntl.LOCK_NB); print('locked')"], 40, fd);
    const med = pct(t, 50);
    return [
      { what: "`mam pane-lock acquire` on a free lock, whole process (median / p90)", target: "≤ 15 ms median", measured: medP90(t), ok: med <= 15 },
      { what: "reference: the same flock from python3 (median / p90)", target: "-", measured: medP90(py), ok: null },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
