// mam broker: an embedded MQTT 3.1.1 broker in the foreground (SPEC §8)
import { usageError } from "../sys/errors.ts";
import { err, out } from "../sys/io.ts";
import { logStamp } from "../sys/time.ts";
import { startBroker } from "../broker/server.ts";
import { defineCommand, str } from "./command.ts";

export default defineCommand({
  meta: {
    name: "broker",
    description: "run an embedded MQTT 3.1.1 broker in the foreground (one machine or a LAN; use Mosquitto/EMQX with TLS and ACLs in production)",
    examples: [
      "mam broker                                  # 127.0.0.1:1883",
      "mam broker --host 0.0.0.0 --port 1883 --username team --password s3cret",
      "mam broker --port 8883 --tls-cert server.crt --tls-key server.key",
    ],
  },
  args: {
    host: { type: "string", default: "127.0.0.1", description: "address to listen on", valueHint: "ADDR" },
    port: { type: "string", default: "1883", description: "port to listen on (0 = a free one, printed at start)", valueHint: "PORT" },
    username: { type: "string", description: "require this username (with --password)", valueHint: "U" },
    password: { type: "string", description: "require this password (with --username)", valueHint: "P" },
    "tls-cert": { type: "string", description: "serve MQTT over TLS with this certificate (PEM)", valueHint: "FILE" },
    "tls-key": { type: "string", description: "the certificate's private key (PEM)", valueHint: "FILE" },
  },
  async run({ args }) {
    const portRaw = str(args, "port")!;
    if (!/^\d+$/.test(portRaw) || Number(portRaw) > 65535) throw usageError(`--port must be a port number (got '${portRaw}')`);
    const log = (m: string) => out(`${logStamp()} ${m}`);
    const b = await startBroker({
      host: str(args, "host")!,
      port: Number(portRaw),
      username: str(args, "username"),
      password: str(args, "password"),
      tlsCertFile: str(args, "tls-cert"),
      tlsKeyFile: str(args, "tls-key"),
      log,
    });
    log(`mam broker listening on ${b.tls ? "mqtts" : "mqtt"}://${b.host}:${b.port}`);
    if (b.host !== "127.0.0.1" && b.host !== "localhost" && b.host !== "::1" && str(args, "username") === undefined) {
      err("WARNING: listening beyond loopback without --username/--password: anyone on the network can publish job events");
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

