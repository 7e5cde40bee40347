// mam's own secrets in the environment (issue 23, R1). mam reads a broker password and a job's
// token from the environment; those values let whoever holds them act as mam (publish events,
// sign them), so mam never hands them on: not to an agent's pane, not to a multiplexer server it
// starts (tmux keeps the environment of the mam that started it for every later pane), not to the
// browser of `mam ui --open`.
//
// The rule (docs/security.md, docs/reference.md): a variable mam reads whose value is a password or
// a token is in SECRET_ENV; tests/unit/secrets.test.ts holds docs/reference.md to it. Everything
// else passes on untouched: the agents' own API keys (ANTHROPIC_API_KEY, …) are theirs, and a
// file's path (MQTT_PASSWORD_FILE, MQTT_KEYFILE) is not the secret it points to.
import { readFileSync } from "node:fs";
import { EXIT, MamError } from "./errors.ts";
import type { Env } from "./paths.ts";

/** the variables whose values are mam's secrets (never in an agent's environment) */
export const SECRET_ENV: readonly string[] = ["MQTT_PASSWORD", "MAM_JOB_TOKEN", "MAM_BROKER_PASSWORD"];

/** the environment without mam's secrets */
export function withoutSecrets(env: Env): Env {
  const out: Env = { ...env };
  for (const k of SECRET_ENV) delete out[k];
  return out;
}

/**
 * A secret kept in a file (`mam broker --password-file`, MQTT_PASSWORD_FILE): its text without
 * one trailing newline. `what` names where the path came from, for the error.
 */
export function readSecretFile(path: string, what: string): string {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    throw new MamError(`cannot read the password file ${path} (${what}): ${(e as Error).message}`, EXIT.FAIL, `check ${what}`);
  }
  const secret = text.replace(/\r?\n$/, "");
  if (secret === "") throw new MamError(`the password file ${path} (${what}) is empty`, EXIT.USAGE, "write the password into it");
  return secret;
}
