// bench area `startup`: what every mam call pays before doing anything, `mam --version` as a
// whole process (a reference row, no target).
import { medP90, type Row, timeProcess } from "./common.ts";

export function benchStartup(bin: string): Row[] {
  const t = timeProcess([bin, "--version"], 40);
  return [{ what: "`mam --version`, whole process (median / p90)", target: "-", measured: medP90(t), ok: null }];
}
