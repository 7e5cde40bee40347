// The pane label mam writes (lib/mux/label.ts, issue 39 item 12): `mam:<name> (<kind>, <role>)`
// carries the kind and role a session was started with, so a registry rebuild or the daemon's
// adoption of a killed create's pane gets them back on herdr; the older `mam:<name>` still reads.
import { describe, expect, test } from "bun:test";
import { labelFor, nameFromLabel, parseLabel } from "../../lib/mux/label.ts";

describe("pane labels", () => {
  test("written with the kind and role; read back whole, whatever the role holds", () => {
    for (const role of ["worker", "lead dev", "a, b (c)", " spaced ", "ça: 1/2", "x".repeat(64)]) {
      const label = labelFor("api.worker-1", "claude", role);
      expect(label).toBe(`mam:api.worker-1 (claude, ${role})`);
      // herdr keeps a label less its leading and trailing blanks: the closing parenthesis keeps the role's
      expect(parseLabel(label.trim())).toEqual({ name: "api.worker-1", kind: "claude", role });
      expect(nameFromLabel(label)).toBe("api.worker-1");
    }
    expect(labelFor("w1", "codex")).toBe("mam:w1 (codex)");
    expect(parseLabel("mam:w1 (codex)")).toEqual({ name: "w1", kind: "codex" });
  });

  test("an older mam's label names only the session: still read", () => {
    expect(parseLabel("mam:lead")).toEqual({ name: "lead" });
    expect(nameFromLabel("mam:proj-creator-claude")).toBe("proj-creator-claude");
    expect(labelFor("lead")).toBe("mam:lead");
  });

  test("a role or kind that cannot be carried is left out, never written half", () => {
    // a control character (a label is anyone's to write: a role read back is never an escape sequence), too long, blank
    for (const role of ["a\tb", "a\u001b[31mb", "x".repeat(65), "   ", ""]) expect(labelFor("s", "claude", role)).toBe("mam:s (claude)");
    expect(labelFor("s", "Not A Kind", "worker")).toBe("mam:s");
  });

  test("not mam's, or a tail it does not know: no kind, no role (the name then is no valid session name)", () => {
    expect(parseLabel(undefined)).toBeUndefined();
    expect(parseLabel("notes")).toBeUndefined();
    expect(parseLabel("MAM:x (claude, lead)")).toBeUndefined();
    expect(nameFromLabel("build (claude, lead)")).toBeUndefined();
    for (const odd of ["mam:x (claude, lead", "mam:x (Claude, lead)", "mam:x (claude,lead)", "mam:x (claude, \u0007)", "mam:x  (claude, lead)", "mam:x (cl aude, lead)", "mam:"]) {
      const f = parseLabel(odd)!;
      expect(f.kind, odd).toBeUndefined();
      expect(f.role, odd).toBeUndefined();
      expect(f.name).toBe(odd.slice(4));
    }
  });
});
