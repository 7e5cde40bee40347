// The JSON Schema subset validator the fake herdr's tests rely on: each keyword must be able to
// fail, and herdr.md's own examples must pass against the vendored schema.
import { describe, expect, test } from "bun:test";
import { HerdrSchema } from "../fakes/herdr/schema/herdr-schema.ts";
import { SchemaValidator } from "../fakes/herdr/schema/validator.ts";

const v = (schema: Record<string, unknown>, value: unknown, root: Record<string, unknown> = { s: schema }) => new SchemaValidator(root).validate(schema, value);

describe("validator keywords", () => {
  test("type, including integer vs number, null and type lists", () => {
    expect(v({ type: "integer" }, 3)).toEqual([]);
    expect(v({ type: "integer" }, 3.5)).toHaveLength(1);
    expect(v({ type: "number" }, 3.5)).toEqual([]);
    expect(v({ type: ["string", "null"] }, null)).toEqual([]);
    expect(v({ type: ["string", "null"] }, 1)).toHaveLength(1);
    expect(v({ type: "object" }, [])).toHaveLength(1);
    expect(v({ type: "array" }, {})).toHaveLength(1);
    expect(v({ type: "boolean" }, 0)).toHaveLength(1);
  });

  test("enum and const compare deeply", () => {
    expect(v({ enum: ["a", "b"] }, "b")).toEqual([]);
    expect(v({ enum: ["a", "b"] }, "c")).toHaveLength(1);
    expect(v({ const: { x: [1, 2] } }, { x: [1, 2] })).toEqual([]);
    expect(v({ const: { x: [1, 2] } }, { x: [2, 1] })).toHaveLength(1);
  });

  test("properties, required, additionalProperties (schema and false), propertyNames, maxProperties", () => {
    const s = { type: "object", properties: { a: { type: "string" } }, required: ["a"], additionalProperties: { type: "integer" } };
    expect(v(s, { a: "x", n: 1 })).toEqual([]);
    expect(v(s, { n: 1 })[0]!.message).toContain("missing required property 'a'");
    expect(v(s, { a: 1 })[0]!.path).toBe("/a");
    expect(v(s, { a: "x", n: "no" })[0]!.path).toBe("/n");
    expect(v({ type: "object", additionalProperties: false }, { z: 1 })).toHaveLength(1);
    expect(v({ type: "object", propertyNames: { pattern: "^[a-z]+$" } }, { Ab: 1 })).toHaveLength(1);
    expect(v({ type: "object", maxProperties: 1 }, { a: 1, b: 2 })).toHaveLength(1);
  });

  test("items, minimum/maximum, uint formats, pattern", () => {
    expect(v({ type: "array", items: { type: "string" } }, ["a", 1])[0]!.path).toBe("/1");
    expect(v({ type: "integer", minimum: 0 }, -1)).toHaveLength(1);
    expect(v({ type: "integer", maximum: 65535 }, 65536)).toHaveLength(1);
    expect(v({ type: "integer", format: "uint16" }, 70000)).toHaveLength(1);
    expect(v({ type: "integer", format: "uint64" }, 7)).toEqual([]);
    expect(v({ type: "string", pattern: "^w[0-9A-Z]+$" }, "w1")).toEqual([]);
    expect(v({ type: "string", pattern: "^w[0-9A-Z]+$" }, "x1")).toHaveLength(1);
  });

  test("oneOf needs exactly one match, anyOf at least one; errors point at the discriminated branch", () => {
    const s = {
      oneOf: [
        { type: "object", properties: { type: { const: "a" }, n: { type: "integer" } }, required: ["type", "n"] },
        { type: "object", properties: { type: { const: "b" } }, required: ["type"] },
      ],
    };
    expect(v(s, { type: "a", n: 1 })).toEqual([]);
    const e = v(s, { type: "a", n: "x" });
    expect(e).toHaveLength(1);
    expect(e[0]!.path).toBe("/n");
    expect(v({ oneOf: [{ type: "integer" }, { type: "number" }] }, 1)[0]!.message).toContain("exactly one");
    expect(v({ anyOf: [{ type: "integer" }, { type: "number" }] }, 1)).toEqual([]);
    expect(v({ anyOf: [{ type: "integer" }, { type: "null" }] }, "x")).toHaveLength(1);
  });

  test("$ref resolves inside the root document; boolean schemas", () => {
    const root = { $defs: { Id: { type: "string" } }, s: { type: "object", properties: { id: { $ref: "#/$defs/Id" } } } };
    const val = new SchemaValidator(root);
    expect(val.validate("#/s", { id: "x" })).toEqual([]);
    expect(val.validate("#/s", { id: 1 })).toHaveLength(1);
    expect(val.validate(true, 1)).toEqual([]);
    expect(val.validate(false, 1)).toHaveLength(1);
    expect(() => val.validate("#/nope", 1)).toThrow("unresolvable");
  });

  test("an unsupported keyword throws instead of passing silently", () => {
    expect(() => v({ type: "array", uniqueItems: true }, [1, 1])).toThrow("unsupported JSON Schema keyword 'uniqueItems'");
  });
});

describe("the vendored herdr schema", () => {
  const schema = HerdrSchema.load();

  test("covers herdr's 91 request methods", () => {
    expect(schema.methods).toHaveLength(91);
    expect(schema.hasMethod("agent.start")).toBe(true);
    expect(schema.hasMethod("fake.inputs")).toBe(false);
  });

  test("accepts herdr.md's example responses and events", () => {
    const pane = { pane_id: "w1:p3", terminal_id: "term_63f1c2b01a7f4", workspace_id: "w1", tab_id: "w1:t1", focused: false, cwd: "/p", agent_status: "unknown", revision: 0 };
    expect(schema.checkSuccess({ id: "1", result: { type: "pane_info", pane } })).toEqual([]);
    expect(schema.checkSuccess({ id: "2", result: { type: "ok" } })).toEqual([]);
    expect(
      schema.checkSuccess({
        id: "5",
        result: {
          type: "agent_started",
          agent: { terminal_id: "t", name: "rev-1", agent_status: "unknown", workspace_id: "w1", tab_id: "w1:t1", pane_id: "w1:p3", focused: false, launch_pending: true, state_change_seq: 0, revision: 0 },
          argv: ["claude", "--session-id", "x"],
        },
      }),
    ).toEqual([]);
    expect(schema.checkError({ id: "", error: { code: "invalid_request", message: "invalid request: x" } })).toEqual([]);
    expect(schema.checkEvent({ event: "pane_closed", data: { type: "pane_closed", pane_id: "w1:p3", workspace_id: "w1" } })).toEqual([]);
    expect(schema.checkEvent({ event: "pane_agent_detected", data: { type: "pane_agent_detected", pane_id: "w1:p3", workspace_id: "w1", released: true, final_status: "idle" } })).toEqual([]);
    expect(schema.checkSubscriptionEvent({ event: "pane.agent_status_changed", data: { pane_id: "w1:p3", workspace_id: "w1", agent_status: "done", agent: "claude" } })).toEqual([]);
  });

  test("rejects wrong shapes", () => {
    expect(schema.checkSuccess({ id: "1", result: { type: "pane_info", pane: { pane_id: "w1:p1" } } }).length).toBeGreaterThan(0);
    expect(schema.checkSuccess({ id: "1", result: { type: "pane_info", pane: { pane_id: "w1:p1", terminal_id: "t", workspace_id: "w1", tab_id: "w1:t1", focused: false, agent_status: "busy", revision: 0 } } }).length).toBeGreaterThan(0);
    expect(schema.checkSuccess({ id: "1", result: { type: "no_such_type" } }).length).toBeGreaterThan(0);
    expect(schema.checkError({ error: { code: "x", message: "y" } }).length).toBeGreaterThan(0);
    expect(schema.checkParams("pane.read", { pane_id: "w1:p1" }).length).toBeGreaterThan(0);
    expect(schema.checkParams("pane.read", { pane_id: "w1:p1", source: "recent" })).toEqual([]);
    expect(schema.checkParams("agent.start", { name: "a", kind: "claude", pane_id: "w1:p1", timeout_ms: -5 }).length).toBeGreaterThan(0);
  });
});
