// Whose pane is it (lib/mux/owner.ts; docs/security.md#a-hostile-workspace): a workspace's muxes
// leave out the panes of another workspace, so that a registry a repository ships can never
// reach them. tmux panes carry their workspace; a herdr pane is another workspace's when its
// shell works in a folder of another mam workspace, outside this one.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { foreignPane } from "../../lib/mux/owner.ts";
import type { MuxPane } from "../../lib/mux/types.ts";
import { makeSandbox, type Sandbox } from "../helpers/sandbox.ts";

let sb: Sandbox;
let ws: string;
let other: string;
beforeEach(() => {
  sb = makeSandbox("mam-own-");
  ws = sb.ws;
  other = join(sb.root, "other");
  for (const d of [join(ws, ".mam", "worktrees", "w1"), join(other, ".mam"), join(other, "src"), join(sb.root, "plain"), join(ws, "vendor", "lib", ".mam")]) mkdirSync(d, { recursive: true });
});
afterEach(() => sb.cleanup());

const pane = (extra: Partial<MuxPane>): MuxPane => ({ id: "x", status: "unknown", ...extra });

describe("foreignPane", () => {
  test("tmux: the workspace mam recorded decides; none recorded (an older mam's session) is not foreign", () => {
    expect(foreignPane(pane({ owner: ws, cwd: other }), ws)).toBe(false);
    expect(foreignPane(pane({ owner: other, cwd: ws }), ws)).toBe(true);
    expect(foreignPane(pane({ cwd: ws }), ws)).toBe(false);
  });

  test("herdr: a pane working in another mam workspace is foreign; in this one, its worktrees, or a folder no workspace holds, it is not", () => {
    expect(foreignPane(pane({ cwd: other }), ws)).toBe(true);
    expect(foreignPane(pane({ cwd: join(other, "src") }), ws)).toBe(true);
    expect(foreignPane(pane({ cwd: ws }), ws)).toBe(false);
    expect(foreignPane(pane({ cwd: join(ws, ".mam", "worktrees", "w1") }), ws)).toBe(false);
    expect(foreignPane(pane({ cwd: join(sb.root, "plain") }), ws)).toBe(false);
    expect(foreignPane(pane({}), ws)).toBe(false);
    // the repository is a folder inside the other workspace: the other's pane is still foreign to it
    expect(foreignPane(pane({ cwd: ws }), join(ws, "vendor", "lib"))).toBe(true);
  });

  test("paths through a symbolic link are compared by where they lead", () => {
    const link = join(sb.root, "link-to-ws");
    symlinkSync(ws, link);
    expect(foreignPane(pane({ cwd: join(link, ".mam", "worktrees", "w1") }), ws)).toBe(false);
    expect(foreignPane(pane({ owner: link }), ws)).toBe(false);
  });
});
