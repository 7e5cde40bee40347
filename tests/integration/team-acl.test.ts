// One Mosquitto for a team as docs/machines.md configures it ("One Mosquitto for a team: TLS, a
// user per host, ACLs"): its mosquitto.conf and ACL blocks, read from the page and used as
// written, with only the file paths and the port put in (a throw-away CA and certificate, a
// password per host). Hosts A and B, each with its own broker user named like it, a password file
// and the CA, as the page says to set them, run a job from A's lead to B's worker; then raw MQTT
// clients with the hosts' own credentials check what the ACL promises:
//
//   * a delivery is read by the host it is addressed to, and by no other host's user;
//   * a host announces only itself: what it publishes on another host's presence or online
//     topic reaches nobody (Mosquitto drops it), on its own it is kept;
//   * without a user, or with a wrong password, the broker takes no connection.
//
// Needs Mosquitto, openssl and tmux: without them the test is skipped with the reason.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { MqttClient } from "mqtt";
import { fencedBlocks } from "../helpers/docs.ts";
import { ROOT } from "../helpers/mam.ts";
import { makeCerts, mosquittoPath, startMosquitto, type TestBroker, writeMosquittoPasswords } from "../helpers/brokers.ts";
import { makeSandbox, type Sandbox, waitFor } from "../helpers/sandbox.ts";
import { formTeam, type Host, makeHost, stages, untilAnnounced } from "../helpers/team.ts";
import { TMUX_BIN } from "../helpers/tmux.ts";

const SKIP = !mosquittoPath()
  ? "mosquitto is not installed (apt-get install mosquitto)"
  : !Bun.which("openssl")
    ? "openssl is not installed"
    : !TMUX_BIN
      ? "tmux is not installed (apt-get install tmux)"
      : undefined;
if (SKIP) console.log(`team ACL test skipped: ${SKIP}`);

/** the page's conf blocks: the one that starts with `# <path>` */
function confBlock(path: string): string[] {
  const md = readFileSync(join(ROOT, "docs", "machines.md"), "utf8");
  const b = fencedBlocks(md).find((x) => x.info === "conf" && x.body[0]?.startsWith(`# ${path}`));
  if (!b) throw new Error(`docs/machines.md has no conf block for ${path}`);
  return b.body.filter((l) => l.trim() && !l.trim().startsWith("#"));
}

const PASSWORDS: Record<string, string> = { hostA: "pw-of-a", hostB: "pw-of-b", hostC: "pw-of-c" };

let sb: Sandbox;
let broker: TestBroker;
let ca: string;
let A: Host;
let B: Host;

/** a raw client of the broker with a host's credentials (TLS, verified with the CA) */
async function as(user: string | undefined, password = user ? PASSWORDS[user] : undefined): Promise<MqttClient> {
  const mqtt = await import("mqtt");
  return mqtt.connectAsync({
    protocol: "mqtts",
    host: "127.0.0.1",
    port: broker.port,
    ca: readFileSync(ca),
    protocolVersion: 4,
    clean: true,
    reconnectPeriod: 0,
    connectTimeout: 5000,
    ...(user ? { username: user, password } : {}),
  } as never);
}

type Got = { topic: string; payload: string }[];

/** what a client gets on a topic filter from now on (retained ones included), as it comes */
async function listen(c: MqttClient, filter: string): Promise<Got> {
  const got: Got = [];
  c.on("message", (t, p) => got.push({ topic: t, payload: p.toString() }));
  await c.subscribeAsync(filter, { qos: 1 });
  return got;
}

/** what a new client of `user` gets on a filter within ms (the retained messages) */
async function retained(user: string, filter: string, ms = 500): Promise<Got> {
  const c = await as(user);
  const got = await listen(c, filter);
  await Bun.sleep(ms);
  await c.endAsync();
  return got.filter((m) => m.payload.length);
}

describe.skipIf(!!SKIP)("one Mosquitto for a team, as docs/machines.md configures it: TLS, a user per host, the ACL", () => {
  beforeAll(async () => {
    sb = makeSandbox("mam-tacl-");
    const dir = join(sb.root, "mosquitto");
    mkdirSync(join(dir, "certs"), { recursive: true });
    const certs = makeCerts(join(sb.root, "certs"));
    // the page's file names, in the test's folder
    copyFileSync(certs.ca, join(dir, "certs", "ca.crt"));
    copyFileSync(certs.cert, join(dir, "certs", "broker.crt"));
    copyFileSync(certs.key, join(dir, "certs", "broker.key"));
    ca = join(dir, "certs", "ca.crt");
    writeMosquittoPasswords(join(dir, "passwd"), PASSWORDS);
    writeFileSync(join(dir, "acl"), `${confBlock("/etc/mosquitto/acl").join("\n")}\n`);
    const conf = confBlock("/etc/mosquitto/conf.d/mam.conf");
    expect(conf).toContain("listener 8883");
    expect(conf).toContain("allow_anonymous false");
    broker = await startMosquitto(dir, {
      config: (port) => conf.map((l) => l.replace(/^listener 8883$/, `listener ${port} 127.0.0.1`).replaceAll("/etc/mosquitto/", `${dir}/`)),
    });
    const hostEnv = (name: string) => {
      const pw = join(sb.root, `${name}.pw`);
      writeFileSync(pw, PASSWORDS[name]!, { mode: 0o600 });
      return { MQTT_BROKER: "127.0.0.1", MQTT_PORT: String(broker.port), MQTT_TLS: "1", MQTT_CA_CERTS: ca, MQTT_USERNAME: name, MQTT_PASSWORD_FILE: pw };
    };
    A = makeHost(sb.root, "hostA", hostEnv("hostA"));
    B = makeHost(sb.root, "hostB", hostEnv("hostB"));
    await formTeam([A, B]);
    await A.demo("lead", "lead");
    await B.demo("w", "worker", ["--think-ms", "50"]);
    await untilAnnounced(A, ["w@hostB", "lead@hostA"], 30_000);
  }, 120_000);

  afterAll(async () => {
    for (const h of [A, B]) await h?.stop();
    await broker?.stop();
    await sb?.cleanup();
  }, 60_000);

  test("a job from A to B runs through it; B's delivery is read by B's user and by no other host's", async () => {
    const others = await as("hostC");
    const ofA = await as("hostA");
    const ofB = await as("hostB");
    try {
      const cGot = await listen(others, "mam/team/lab/deliver/#");
      const aGot = await listen(ofA, "mam/team/lab/deliver/#");
      const bGot = await listen(ofB, "mam/team/lab/deliver/hostB/#");

      const out = await A.ok(["job", "submit", "--to", "w@hostB", "--from", "lead", "--prompt", "behind an ACL"]);
      const id = out.trim();
      const w = await A.mam(["job", "wait", id, "--timeout", "30"], {}, 60_000);
      expect(w.code, `${w.stdout}${w.stderr}\n${A.log()}\n${B.log()}`).toBe(0);
      await waitFor(() => A.journal(id).some((e) => e.event === "completed"), 5000);
      expect(stages(A.journal(id))).toEqual(["offered mam", "received mam@hostB", "delivered mam@hostB", "started w@hostB", "progress w@hostB", "completed w@hostB"]);
      await Bun.sleep(500);
      // B's user read the delivery; hostC's user and the delegator's own did not
      expect(bGot.filter((m) => m.payload.length && m.topic.includes(`/${id}.`)).length).toBeGreaterThanOrEqual(1);
      expect(cGot).toEqual([]);
      expect(aGot).toEqual([]);
      // and the ACL let A clear the delivery once it was received
      expect(await retained("hostB", "mam/team/lab/deliver/hostB/#")).toEqual([]);
    } finally {
      for (const c of [others, ofA, ofB]) await c.endAsync().catch(() => {});
    }
  }, 90_000);

  test("a host announces only itself: B's message on A's presence or online topic reaches nobody; on its own it is kept", async () => {
    const b = await as("hostB");
    const forgedPresence = "mam/team/lab/presence/hostA/000000000000";
    const forgedOnline = "mam/team/lab/online/hostA/000000000000";
    const own = "mam/team/lab/presence/hostB/000000000000";
    const reader = await as("hostA");
    try {
      const heard = await listen(reader, "mam/team/lab/#");
      const live = () => heard.map((m) => m.topic);
      await b.publishAsync(forgedPresence, "forged", { qos: 1, retain: true });
      await b.publishAsync(forgedOnline, "forged", { qos: 1, retain: true });
      await b.publishAsync(own, "its own", { qos: 1, retain: true });
      expect(await waitFor(() => live().includes(own), 5000), live().join("\n")).toBe(true);
      await Bun.sleep(500);
      expect(live()).not.toContain(forgedPresence);
      expect(live()).not.toContain(forgedOnline);
      // nor kept for later readers
      const kept = (await retained("hostC", "mam/team/lab/+/hostA/#")).map((m) => m.topic);
      expect(kept).not.toContain(forgedPresence);
      expect(kept).not.toContain(forgedOnline);
      expect(kept.some((t) => t.startsWith("mam/team/lab/presence/hostA/"))).toBe(true); // A's real one
    } finally {
      await b.publishAsync(own, "", { qos: 1, retain: true }).catch(() => {});
      for (const c of [b, reader]) await c.endAsync().catch(() => {});
    }
  }, 30_000);

  test("no connection without a user, or with another host's password", async () => {
    await expect(as(undefined)).rejects.toThrow();
    await expect(as("hostB", PASSWORDS.hostA)).rejects.toThrow();
  }, 30_000);
});
