// A workspace's online state as the team reads it (lib/team/messages.ts): bound to its topic's
// host and workspace, and ordered by the connection that says it, so that a replayed or copied
// `offline` changes nothing (security review T6). Pure.
import { describe, expect, test } from "bun:test";
import { checkOnline, onlineNow, onlineOrder } from "../../lib/team/messages.ts";

const W1 = "aaaaaaaaaaaa";
const W2 = "bbbbbbbbbbbb";
const state = (online: boolean, since: number, ws = W1) => ({ online, at: since + 5, host: "hostB", ws_id: ws, since });

describe("checkOnline: bound to its topic", () => {
  test("taken on its own topic", () => {
    expect(checkOnline(state(false, 100), "hostB", W1)).toEqual(state(false, 100));
  });
  test("W1's offline copied onto W2's topic, or another host's: ignored", () => {
    expect(checkOnline(state(false, 100, W1), "hostB", W2)).toBeUndefined();
    expect(checkOnline(state(false, 100, W1), "hostC", W1)).toBeUndefined();
  });
  test("an older mam's, without host, workspace or connection: ignored", () => {
    expect(checkOnline({ online: false, at: 100 }, "hostB", W1)).toBeUndefined();
  });
});

describe("freshness", () => {
  test("a later connection's state is newer; of one connection, the offline (its will) is", () => {
    expect(onlineOrder(state(true, 200))).toBeGreaterThan(onlineOrder(state(false, 100)));
    expect(onlineOrder(state(false, 200))).toBeGreaterThan(onlineOrder(state(true, 200)));
  });
  test("a reader of the retained messages: an offline older than the presence's connection says nothing", () => {
    expect(onlineNow(state(false, 100), { since: 200 })).toBe(true); // replayed
    expect(onlineNow(state(false, 200), { since: 200 })).toBe(false); // its will fired
    expect(onlineNow(state(true, 200), { since: 200 })).toBe(true);
    expect(onlineNow(undefined, { since: 200 })).toBe(false);
  });
});
