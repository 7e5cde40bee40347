// callerServers (SPEC §6.1 "plus the server of the caller's pane"): herdr from HERDR_SESSION /
// HERDR_SOCKET_PATH, tmux from TMUX when its socket is where `tmux -L <name>` looks.
import { expect, test } from "bun:test";
import { callerServers } from "../../lib/ops/reconcile.ts";

test("a tmux pane: the -L name of its socket", () => {
  expect(callerServers({ TMUX: "/tmp/tmux-1000/mam,4242,0", PATH: "" }, 1000)).toEqual([{ backend: "tmux", server: "mam" }]);
  expect(callerServers({ TMUX: "/x/y/tmux-0/work,1,2", TMUX_TMPDIR: "/x/y", PATH: "" }, 0)).toEqual([{ backend: "tmux", server: "work" }]);
});

test("a socket -L cannot reach (tmux -S elsewhere, another uid, a bad name) is not listed", () => {
  expect(callerServers({ TMUX: "/srv/sockets/mam,1,0", PATH: "" }, 0)).toEqual([]);
  expect(callerServers({ TMUX: "/tmp/tmux-1000/mam,1,0", PATH: "" }, 0)).toEqual([]);
  expect(callerServers({ TMUX: "/tmp/tmux-0/bad name,1,0", PATH: "" }, 0)).toEqual([]);
  expect(callerServers({ TMUX: "", PATH: "" }, 0)).toEqual([]);
  expect(callerServers({ PATH: "" }, 0)).toEqual([]);
});

test("a herdr pane: its server, when herdr can be run", () => {
  expect(callerServers({ HERDR_SESSION: "team", MAM_HERDR_BIN: "/bin/true", PATH: "" }, 0)).toEqual([{ backend: "herdr", server: "team" }]);
  expect(callerServers({ HERDR_SESSION: "team", PATH: "" }, 0)).toEqual([]); // no herdr at all
});
