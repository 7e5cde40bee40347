// mam's secrets stay mam's (issue 23, R1/R3/R4/R7): the list and its rule, what an agent's
// environment holds, a password kept in a file, the daemon's client id, the page `ui --open`
// hands the browser.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openerPage } from "../../lib/sys/ui-file.ts";
import { daemonClientId, daemonClientKey, daemonKeyPath } from "../../lib/daemon/broker-link.ts";
import { brokerConfigFromEnv, clientId } from "../../lib/jobs/broker-config.ts";
import { agentShimDir, withoutShimDirs } from "../../lib/mux/shim.ts";
import { agentEnv } from "../../lib/ops/session/launch.ts";
import { readSecretFile, SECRET_ENV, withoutSecrets } from "../../lib/sys/secrets.ts";

const ROOT = join(import.meta.dir, "..", "..");
const tmp = mkdtempSync(join(tmpdir(), "mam-sec-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe("the secrets mam never hands on", () => {
  test("the rule: every variable docs/reference.md lists whose name ends in _PASSWORD or _TOKEN is one", () => {
    const doc = readFileSync(join(ROOT, "docs", "reference.md"), "utf8");
    const named = [...new Set([...doc.matchAll(/`([A-Z][A-Z0-9_]*_(?:PASSWORD|TOKEN))`/g)].map((m) => m[1]!))].sort();
    expect(named.length).toBeGreaterThanOrEqual(3);
    expect(named).toEqual([...SECRET_ENV].sort());
  });

  test("withoutSecrets leaves everything else, the agents' own API keys and a password file's path included", () => {
    const env = { MQTT_PASSWORD: "p", MAM_JOB_TOKEN: "t", MAM_BROKER_PASSWORD: "b", ANTHROPIC_API_KEY: "k", MQTT_PASSWORD_FILE: "/f", MQTT_USERNAME: "u", PATH: "/bin" };
    expect(withoutSecrets(env)).toEqual({ ANTHROPIC_API_KEY: "k", MQTT_PASSWORD_FILE: "/f", MQTT_USERNAME: "u", PATH: "/bin" });
    expect(env.MQTT_PASSWORD).toBe("p"); // a copy
  });

  test("a password file: its text without one trailing newline; unreadable or empty is an error naming where it came from", () => {
    const f = join(tmp, "pw");
    writeFileSync(f, "s3cret \n");
    expect(readSecretFile(f, "MQTT_PASSWORD_FILE")).toBe("s3cret ");
    writeFileSync(f, "\n");
    expect(() => readSecretFile(f, "MQTT_PASSWORD_FILE")).toThrow(`the password file ${f} (MQTT_PASSWORD_FILE) is empty`);
    expect(() => readSecretFile(join(tmp, "nope"), "--password-file")).toThrow(`cannot read the password file ${join(tmp, "nope")} (--password-file)`);
  });

  test("MQTT_PASSWORD_FILE is read when mam connects, MQTT_PASSWORD wins over it", async () => {
    const f = join(tmp, "mqtt-pw");
    writeFileSync(f, "from-file\n");
    const { mqttOptions } = await import("../../lib/jobs/broker-config.ts");
    const o = (env: Record<string, string>) => mqttOptions(brokerConfigFromEnv(env), { clientId: "x", clean: true, connectTimeoutMs: 1, reconnectPeriodMs: 0 });
    expect(o({ MQTT_USERNAME: "u", MQTT_PASSWORD_FILE: f }).password).toBe("from-file");
    expect(o({ MQTT_USERNAME: "u", MQTT_PASSWORD_FILE: f, MQTT_PASSWORD: "direct" }).password).toBe("direct");
    expect(brokerConfigFromEnv({ MQTT_PASSWORD_FILE: join(tmp, "missing") }).passwordFile).toBe(join(tmp, "missing")); // not read yet
  });
});

describe("an agent's PATH (R3)", () => {
  const env = { HOME: "/h", PATH: "/ws/.mam/bin:/h/.local/state/mam/shims/aaaa:/usr/bin:/other/.mam/bin/:/bin" };

  test("no workspace's .mam/bin and no other shim folder; herdr agents get their own shim folder first", () => {
    expect(agentEnv("/ws", "w1", env)).toEqual({ PATH: "/usr/bin:/bin", MAM_SESSION: "w1", MAM_WORKSPACE: "/ws" });
    const dir = agentShimDir("/ws", env);
    expect(agentEnv("/ws", "w1", env, dir).PATH).toBe(`${dir}:/usr/bin:/bin`);
  });

  test("the shim folder is under mam's per-user state, one per workspace, never inside it", () => {
    const a = agentShimDir("/ws", env);
    expect(a).toMatch(/^\/h\/\.local\/state\/mam\/shims\/[0-9a-f]{16}$/);
    expect(agentShimDir("/ws2", env)).not.toBe(a);
    expect(withoutShimDirs(`${a}:/bin`, env)).toBe("/bin");
    expect(withoutShimDirs("/bin", {})).toBe("/bin"); // no home: nothing of mam's to drop
  });
});

describe("the daemon's MQTT client id (R4)", () => {
  const cfg = brokerConfigFromEnv({});
  test("not the hash of the workspace path any more; stable for the workspace; kept 0600", () => {
    const env = { HOME: join(tmp, "home") };
    const ws = "/some/ws";
    const id = daemonClientId(cfg, ws, env);
    expect(id.length).toBeLessThanOrEqual(23);
    expect(id).toStartWith("mam-mon-");
    expect(id).not.toBe(clientId(cfg, "mon", `monitor:${ws}`)); // what 0.2 used: anyone could compute it
    expect(daemonClientId(cfg, ws, env)).toBe(id);
    expect(daemonClientId(cfg, "/other/ws", env)).not.toBe(id);
    expect(statSync(daemonKeyPath(ws, env)).mode & 0o777).toBe(0o600);
    expect(statSync(join(daemonKeyPath(ws, env), "..")).mode & 0o777).toBe(0o700);
    expect(readFileSync(daemonKeyPath(ws, env), "utf8")).toMatch(/^[0-9a-f]{32}\n$/);
  });

  test("without a home the key serves this run only", () => {
    expect(daemonClientKey("/ws", {})).toMatch(/^[0-9a-f]{32}$/);
    expect(daemonClientKey("/ws", {})).not.toBe(daemonClientKey("/ws", {}));
  });
});

describe("mam ui --open (R7)", () => {
  test("the browser gets a 0600 page that forwards to the URL, in a 0700 folder", () => {
    const env = { HOME: join(tmp, "uihome") };
    const url = "http://127.0.0.1:4242/?token=abc&x=1";
    const page = openerPage(url, 4242, env);
    expect(page).toBe(join(tmp, "uihome", ".local", "state", "mam", "ui", "open-4242.html"));
    expect(statSync(page).mode & 0o777).toBe(0o600);
    expect(statSync(join(page, "..")).mode & 0o777).toBe(0o700);
    const text = readFileSync(page, "utf8");
    expect(text).toContain('<meta http-equiv="refresh" content="0;url=http://127.0.0.1:4242/?token=abc&amp;x=1">');
    expect(text).toContain('<meta name="referrer" content="no-referrer">');
  });
});
