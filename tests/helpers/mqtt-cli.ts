// mosquitto_pub and mosquitto_sub for tests that run an MQTT client as a process (inside a
// netlab host, say): MOSQUITTO_PUB / MOSQUITTO_SUB are the real clients (Debian's
// mosquitto-clients) when installed, else this file run by bun, which takes the same flags for
// what the tests use and prints the same output:
//   pub -h HOST -p PORT -t TOPIC -m MSG [-q 0|1] [-r] [-i ID]
//   sub -h HOST -p PORT -t TOPIC [-q 0|1] [-C COUNT] [-W SECONDS] [-v] [-k SECONDS] [-i ID]
//       [--will-topic T] [--will-payload MSG] [--will-qos 0|1]
// sub prints each message's payload on a line (-v: "topic payload"), exits 0 after -C
// messages, 27 and "Timed out" after -W seconds (as mosquitto_sub does), 1 when it cannot connect
// or loses its connection (mosquitto_sub would reconnect). MAM_TEST_MQTT_STANDIN=1 picks the
// stand-in even where mosquitto-clients is installed.
import { existsSync } from "node:fs";

function real(name: string): string | undefined {
  if (process.env.MAM_TEST_MQTT_STANDIN === "1") return undefined; // to test the stand-in where the real ones are installed
  for (const d of ["/usr/bin", "/usr/local/bin", "/usr/sbin"]) if (existsSync(`${d}/${name}`)) return `${d}/${name}`;
  return undefined;
}

const self = import.meta.path;
const pub = real("mosquitto_pub");
const sub = real("mosquitto_sub");
/** argv prefix of a mosquitto_pub */
export const MOSQUITTO_PUB: string[] = pub ? [pub] : [process.execPath, self, "pub"];
/** argv prefix of a mosquitto_sub */
export const MOSQUITTO_SUB: string[] = sub ? [sub] : [process.execPath, self, "sub"];
/** which clients these are, for a test's log */
export const MQTT_CLIENTS = pub && sub ? "mosquitto-clients" : `bun stand-in (${process.env.MAM_TEST_MQTT_STANDIN === "1" ? "MAM_TEST_MQTT_STANDIN=1" : "mosquitto-clients not installed"})`;

async function main(argv: string[]): Promise<number> {
  const mode = argv[0];
  const flags: Record<string, string> = {};
  const bool = new Set(["-r", "-v"]);
  for (let i = 1; i < argv.length; i++) {
    const a = argv[i]!;
    if (bool.has(a)) flags[a] = "1";
    else if (i + 1 < argv.length) flags[a] = argv[++i]!;
    else {
      console.error(`Error: ${a} needs a value`);
      return 1;
    }
  }
  const { default: mqtt } = await import("mqtt");
  const qos = Number(flags["-q"] ?? 0) as 0 | 1;
  const keepalive = Number(flags["-k"] ?? 60);
  const will = flags["--will-topic"] ? { topic: flags["--will-topic"], payload: Buffer.from(flags["--will-payload"] ?? ""), qos: Number(flags["--will-qos"] ?? 0) as 0 | 1, retain: false } : undefined;
  let client: import("mqtt").MqttClient;
  try {
    client = await mqtt.connectAsync({
      host: flags["-h"] ?? "localhost",
      port: Number(flags["-p"] ?? 1883),
      clientId: flags["-i"] ?? `mqtt-cli-${process.pid}`,
      keepalive,
      reconnectPeriod: 0,
      connectTimeout: 10_000,
      protocolVersion: 4,
      will,
    } as never);
  } catch (e) {
    console.error(`Error: ${(e as Error).message}`);
    return 1;
  }
  if (mode === "pub") {
    await client.publishAsync(flags["-t"]!, flags["-m"] ?? "", { qos, retain: !!flags["-r"] });
    await client.endAsync();
    return 0;
  }
  if (mode !== "sub") {
    console.error(`Error: pub or sub, not ${mode}`);
    return 1;
  }
  const count = Number(flags["-C"] ?? 0);
  let got = 0;
  return await new Promise<number>((resolve) => {
    const finish = (code: number) => {
      client.end(true);
      resolve(code);
    };
    if (flags["-W"]) {
      setTimeout(() => {
        console.error("Timed out");
        finish(27);
      }, Number(flags["-W"]) * 1000);
    }
    client.on("close", () => finish(got >= count && count > 0 ? 0 : 1));
    client.on("message", (topic, payload) => {
      process.stdout.write(flags["-v"] ? `${topic} ${payload}\n` : `${payload}\n`);
      if (count && ++got >= count) finish(0);
    });
    client.subscribe(flags["-t"]!, { qos }, (err) => {
      if (err) {
        console.error(`Error: ${err.message}`);
        finish(1);
      }
    });
  });
}

if (import.meta.main) process.exit(await main(process.argv.slice(2)));
