// mam broker: an embedded MQTT 3.1.1 broker in the foreground (SPEC §8). Its password comes from
// a file (--password-file) or MAM_BROKER_PASSWORD, so that it is not in the process list;
// --password still works and says that every user of the machine can read it there (issue 23, R7).
import { usageError } from "../sys/errors.ts";
import { err, out } from "../sys/io.ts";
import type { Env } from "../sys/paths.ts";
import { readSecretFile } from "../sys/secrets.ts";
import { logStamp } from "../sys/time.ts";
import { startBroker } from "../broker/server.ts";
import { defineCommand, str } from "./command.ts";

/** the broker's password: --password-file, else --password, else MAM_BROKER_PASSWORD; checked against --username */
function brokerPassword(a: { username?: string; password?: string; passwordFile?: string }, env: Env): string | undefined {
  if (a.password !== undefined && a.passwordFile !== undefined) throw usageError("give one of --password and --password-file");
  const fromEnv = env.MAM_BROKER_PASSWORD || undefined;
  const password = a.passwordFile !== undefined ? readSecretFile(a.passwordFile, "--password-file") : (a.password ?? fromEnv);
  if (a.username !== undefined && password === undefined) {
    throw usageError("--username needs a password", "put it in a file and pass --password-file FILE, or set MAM_BROKER_PASSWORD");
  }
  if (a.username === undefined && password !== undefined) {
    if (a.password === undefined && a.passwordFile === undefined) {
      throw usageError("MAM_BROKER_PASSWORD is set but --username is not given", "give --username U, or unset MAM_BROKER_PASSWORD for a broker without a password");
    }
    throw usageError("a password needs --username", "give --username U as well");
  }
  return password;
}

export default defineCommand({
  meta: {
    name: "broker",
    description: "run an embedded MQTT 3.1.1 broker in the foreground (one machine or a LAN; use Mosquitto/EMQX with TLS and ACLs in production)",
    examples: [
      "mam broker                                  # 127.0.0.1:1883",
      "mam broker --host 0.0.0.0 --port 1883 --username team --password-file ~/.config/mam/broker.pw",
      "MAM_BROKER_PASSWORD=… mam broker --host 0.0.0.0 --username team",
      "mam broker --port 8883 --tls-cert server.crt --tls-key server.key",
    ],
  },
  args: {
    host: { type: "string", default: "127.0.0.1", description: "address to listen on", valueHint: "ADDR" },
    port: { type: "string", default: "1883", description: "port to listen on (0 = a free one, printed at start)", valueHint: "PORT" },
    username: { type: "string", description: "require this username, with the password from --password-file or MAM_BROKER_PASSWORD", valueHint: "U" },
    "password-file": { type: "string", description: "require the password in this file (its text, without a trailing newline)", valueHint: "FILE" },
    password: { type: "string", description: "require this password (every user of the machine sees it in ps: prefer --password-file or MAM_BROKER_PASSWORD)", valueHint: "P" },
    "tls-cert": { type: "string", description: "serve MQTT over TLS with this certificate (PEM)", valueHint: "FILE" },
    "tls-key": { type: "string", description: "the certificate's private key (PEM)", valueHint: "FILE" },
  },
  async run({ args }) {
    const portRaw = str(args, "port")!;
    if (!/^\d+$/.test(portRaw) || Number(portRaw) > 65535) throw usageError(`--port must be a port number (got '${portRaw}')`);
    const username = str(args, "username");
    const password = brokerPassword({ username, password: str(args, "password"), passwordFile: str(args, "password-file") }, process.env);
    if (str(args, "password") !== undefined) {
      err("WARNING: --password is visible to every user of this machine (ps, /proc); use --password-file FILE or MAM_BROKER_PASSWORD");
    }
    const log = (m: string) => out(`${logStamp()} ${m}`);
    const b = await startBroker({
      host: str(args, "host")!,
      port: Number(portRaw),
      username,
      password,
      tlsCertFile: str(args, "tls-cert"),
      tlsKeyFile: str(args, "tls-key"),
      log,
    });
    log(`mam broker listening on ${b.tls ? "mqtts" : "mqtt"}://${b.host}:${b.port}`);
    if (b.host !== "127.0.0.1" && b.host !== "localhost" && b.host !== "::1" && username === undefined) {
      err("WARNING: listening beyond loopback without --username and a password: anyone on the network can publish job events");
    }
    return await new Promise<number>((resolve) => {
      const stop = (sig: "SIGTERM" | "SIGINT") => {
        log(`signal ${sig === "SIGTERM" ? 15 : 2} received, exiting`);
        const code = sig === "SIGTERM" ? 143 : 130;
        const force = setTimeout(() => resolve(code), 1000);
        b.close().then(() => {
          clearTimeout(force);
          resolve(code);
        }, () => resolve(code));
      };
      process.on("SIGTERM", () => stop("SIGTERM"));
      process.on("SIGINT", () => stop("SIGINT"));
    });
  },
});

