// The team this machine belongs to (docs/machines.md): machines that share a broker and a team
// secret. The secret is 32 random bytes, kept in <home>/.local/state/mam/team.json (0600) and
// never printed but inside a join code, which `mam team init` / `mam team code` print for the
// user to carry to another machine (`mam team join CODE`). The team may name its broker, so that
// a machine that joined needs no MQTT_* settings.
import { hkdfSync } from "node:crypto";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { atomicWriteFile } from "../sys/atomic.ts";
import { randomBytes } from "../sys/digest.ts";
import { EXIT, MamError, usageError } from "../sys/errors.ts";
import { isValidName } from "../sys/names.ts";
import { type Env, stateDir } from "../sys/paths.ts";

export interface TeamBroker {
  host: string;
  port: number;
  tls: boolean;
}

export interface Team {
  schema_version: 1;
  /** the team's name: part of its topics */
  team: string;
  /** base64url of 32 random bytes */
  secret: string;
  broker?: TeamBroker;
  /** when this machine made or joined it (UTC) */
  since: string;
}

const CODE_PREFIX = "mamteam1.";

export const teamPath = (env: Env) => join(stateDir(env), "team.json");

export function newSecret(): string {
  return randomBytes(32).toString("base64url");
}

function checkTeam(v: unknown, where: string): Team {
  const t = v as Partial<Team> | null;
  const bad = (why: string) => new MamError(`${where}: ${why}`, EXIT.FAIL, "run mam team join CODE again, or mam team init for a new team");
  if (!t || typeof t !== "object") throw bad("not a team");
  if (typeof t.team !== "string" || !isValidName(t.team)) throw bad("the team name is missing or invalid");
  if (typeof t.secret !== "string" || Buffer.from(t.secret, "base64url").length !== 32) throw bad("the team secret is missing or not 32 bytes");
  if (t.broker !== undefined) {
    const b = t.broker;
    if (typeof b?.host !== "string" || b.host === "" || !Number.isInteger(b.port) || b.port < 1 || b.port > 65535 || typeof b.tls !== "boolean") throw bad("the team's broker is invalid");
  }
  return { schema_version: 1, team: t.team, secret: t.secret, ...(t.broker ? { broker: t.broker } : {}), since: typeof t.since === "string" ? t.since : "" };
}

/** this machine's team, or undefined when it is in none */
export function loadTeam(env: Env): Team | undefined {
  const path = teamPath(env);
  if (!existsSync(path)) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(readFileSync(path, "utf8"));
  } catch (e) {
    throw new MamError(`${path} is not valid JSON (${(e as Error).message})`, EXIT.FAIL, "run mam team join CODE again, or mam team init for a new team");
  }
  return checkTeam(v, path);
}

export function requireTeam(env: Env): Team {
  const t = loadTeam(env);
  if (!t) throw new MamError("this machine is in no team", EXIT.FAIL, "make one with mam team init, or join one with mam team join CODE");
  return t;
}

export function saveTeam(env: Env, t: Team): string {
  const path = teamPath(env);
  mkdirSync(stateDir(env), { recursive: true, mode: 0o700 });
  atomicWriteFile(path, `${JSON.stringify(t, null, 2)}\n`, { mode: 0o600 });
  return path;
}

/** the code another machine joins with: the team, its secret and its broker */
export function joinCode(t: Team): string {
  const body = { v: 1, team: t.team, secret: t.secret, ...(t.broker ? { broker: t.broker } : {}) };
  return `${CODE_PREFIX}${Buffer.from(JSON.stringify(body)).toString("base64url")}`;
}

export function parseJoinCode(code: string, since: string): Team {
  const c = code.trim();
  if (!c.startsWith(CODE_PREFIX)) throw usageError("that is not a mam team join code", "copy the whole line mam team init (or mam team code) printed, starting with mamteam1.");
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(c.slice(CODE_PREFIX.length), "base64url").toString("utf8"));
  } catch {
    throw usageError("the join code is damaged (not the whole line?)", "copy the whole line mam team init printed");
  }
  try {
    return checkTeam({ ...(v as object), since }, "the join code");
  } catch (e) {
    throw usageError((e as Error).message, "copy the whole line mam team init printed");
  }
}

/** a broker given as host[:port] (the team's, for machines that set no MQTT_BROKER) */
export function parseBroker(text: string, tls: boolean): TeamBroker {
  const m = /^(\[[0-9a-fA-F:]+\]|[^:\s/]+)(?::(\d{1,5}))?$/.exec(text.trim());
  if (!m) throw usageError(`${text.slice(0, 80)} is not a broker address`, "give host or host:port");
  const port = m[2] === undefined ? (tls ? 8883 : 1883) : Number(m[2]);
  if (port < 1 || port > 65535) throw usageError(`broker port ${m[2]} is out of range`);
  return { host: m[1]!.replace(/^\[|\]$/g, ""), port, tls };
}

/**
 * A machine of a team whose user named no broker (MQTT_BROKER unset) uses the team's: MQTT_BROKER,
 * MQTT_PORT and MQTT_TLS are set from it in `env` (the process's, so that the daemon and the
 * agents' shells inherit them). A team.json that does not read is left to the commands that need
 * the team to report.
 */
export function applyTeamBroker(env: Env): void {
  if (env.MQTT_BROKER) return;
  const path = teamPath(env);
  if (!existsSync(path)) return;
  let t: Team | undefined;
  try {
    t = loadTeam(env);
  } catch {
    return;
  }
  if (!t?.broker) return;
  env.MQTT_BROKER = t.broker.host;
  if (!env.MQTT_PORT) env.MQTT_PORT = String(t.broker.port);
  if (!env.MQTT_TLS) env.MQTT_TLS = t.broker.tls ? "1" : "0";
}

const derived = new Map<string, Buffer>();

/**
 * a 32-byte key for one use of the team secret (`purpose`: "mam team seal v1", "mam daemon attest
 * v1"): HKDF-SHA256 over the secret, salted with the team's name; each purpose gets its own key
 */
export function teamKey(t: Team, purpose: string): Buffer {
  const id = `${purpose}\u0000${t.team}\u0000${t.secret}`;
  let k = derived.get(id);
  if (!k) {
    k = Buffer.from(hkdfSync("sha256", Buffer.from(t.secret, "base64url"), Buffer.from(t.team), Buffer.from(purpose), 32));
    derived.set(id, k);
  }
  return k;
}
