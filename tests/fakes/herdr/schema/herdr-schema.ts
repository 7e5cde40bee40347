// The vendored herdr API schema (herdr-api.schema.json, herdr v0.8.2 docs/next/api) and checks of whole
// messages against it: requests, success and error responses, lifecycle and subscription events.
import { readFileSync } from "node:fs";
import schemaPath from "../herdr-api.schema.json" with { type: "file" };
import { type SchemaError, SchemaValidator } from "./validator.ts";

// with type "file" the import is the path of the embedded file (TypeScript types it as the JSON)
export const SCHEMA_PATH: string = schemaPath as unknown as string;

let cached: HerdrSchema | undefined;

export class HerdrSchema {
  readonly validator: SchemaValidator;
  /** method name → the schema of its params */
  private readonly params = new Map<string, unknown>();

  constructor(readonly doc: Record<string, any>) {
    this.validator = new SchemaValidator(doc);
    for (const branch of doc.schemas.request.oneOf as Record<string, any>[]) {
      const m = branch.properties?.method?.const;
      if (typeof m === "string") this.params.set(m, branch.properties.params);
    }
  }

  static load(): HerdrSchema {
    cached ??= new HerdrSchema(JSON.parse(readFileSync(SCHEMA_PATH, "utf8")));
    return cached;
  }

  get methods(): string[] {
    return [...this.params.keys()];
  }

  hasMethod(m: string): boolean {
    return this.params.has(m);
  }

  /** errors of params against the method's params schema (method must exist) */
  checkParams(method: string, params: unknown): SchemaError[] {
    return this.validator.validate(this.params.get(method) as never, params);
  }

  checkRequest(v: unknown): SchemaError[] {
    return this.validator.validate("#/schemas/request", v);
  }

  checkSuccess(v: unknown): SchemaError[] {
    return this.validator.validate("#/schemas/success_response", v);
  }

  checkError(v: unknown): SchemaError[] {
    return this.validator.validate("#/schemas/error_response", v);
  }

  /** a lifecycle event envelope {event, data:{type,…}} */
  checkEvent(v: unknown): SchemaError[] {
    return this.validator.validate("#/schemas/event", v);
  }

  /** a per-pane subscription event {event:"pane.…", data:{…}} */
  checkSubscriptionEvent(v: unknown): SchemaError[] {
    return this.validator.validate("#/schemas/subscription_event", v);
  }

  /** any line the server may write: a response or an event of either wire format */
  checkServerLine(v: unknown): SchemaError[] {
    const o = v as Record<string, unknown>;
    if (o && typeof o === "object" && "result" in o) return this.checkSuccess(v);
    if (o && typeof o === "object" && "error" in o) return this.checkError(v);
    if (o && typeof o.event === "string" && o.event.includes(".")) return this.checkSubscriptionEvent(v);
    return this.checkEvent(v);
  }
}
