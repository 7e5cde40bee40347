// MQTT_BROKER and friends (issue 23, newcomer trial #5): a host, host:port or an mqtt(s):// URL;
// anything else is refused before anything is sent, never taken for a host name that cannot resolve.
import { describe, expect, test } from "bun:test";
import { brokerConfigFromEnv, describeBroker, onEndpoint, parseBrokerAddress } from "../../lib/jobs/broker-config.ts";
import { EXIT, MamError } from "../../lib/sys/errors.ts";

const cfg = (env: Record<string, string>) => {
  const c = brokerConfigFromEnv(env);
  return { host: c.host, port: c.port, tls: c.tls };
};
const refused = (env: Record<string, string>): string => {
  try {
    brokerConfigFromEnv(env);
  } catch (e) {
    expect(e).toBeInstanceOf(MamError);
    expect((e as MamError).exitCode).toBe(EXIT.USAGE);
    return (e as MamError).render();
  }
  throw new Error(`accepted ${JSON.stringify(env)}`);
};

describe("MQTT_BROKER", () => {
  test("a host, a host and port, an IPv6 address, with or without brackets", () => {
    expect(cfg({})).toEqual({ host: "127.0.0.1", port: 1883, tls: false });
    expect(cfg({ MQTT_BROKER: "broker.internal" })).toEqual({ host: "broker.internal", port: 1883, tls: false });
    expect(cfg({ MQTT_BROKER: "127.0.0.1:59999" })).toEqual({ host: "127.0.0.1", port: 59999, tls: false });
    expect(cfg({ MQTT_BROKER: "my_broker-1.lan:1884", MQTT_TLS: "1" })).toEqual({ host: "my_broker-1.lan", port: 1884, tls: true });
    expect(cfg({ MQTT_BROKER: "::1" })).toEqual({ host: "::1", port: 1883, tls: false });
    expect(cfg({ MQTT_BROKER: "[::1]:1884" })).toEqual({ host: "::1", port: 1884, tls: false });
    expect(cfg({ MQTT_BROKER: "[::1]" })).toEqual({ host: "::1", port: 1883, tls: false });
    expect(describeBroker(brokerConfigFromEnv({ MQTT_BROKER: "[::1]:1884" }))).toBe("[::1]:1884");
  });

  test("a URL: mqtt:// is plain, mqtts:// is TLS (8883 unless a port is given)", () => {
    expect(cfg({ MQTT_BROKER: "mqtt://127.0.0.1" })).toEqual({ host: "127.0.0.1", port: 1883, tls: false });
    expect(cfg({ MQTT_BROKER: "mqtt://broker:1999/" })).toEqual({ host: "broker", port: 1999, tls: false });
    expect(cfg({ MQTT_BROKER: "mqtts://broker" })).toEqual({ host: "broker", port: 8883, tls: true });
    expect(cfg({ MQTT_BROKER: "MQTTS://[::1]:9883" })).toEqual({ host: "::1", port: 9883, tls: true });
  });

  test("MQTT_PORT and MQTT_TLS may repeat what the address says, not contradict it", () => {
    expect(cfg({ MQTT_BROKER: "h:1884", MQTT_PORT: "1884" })).toEqual({ host: "h", port: 1884, tls: false });
    expect(cfg({ MQTT_BROKER: "h", MQTT_PORT: "1884" })).toEqual({ host: "h", port: 1884, tls: false });
    expect(cfg({ MQTT_BROKER: "mqtts://h", MQTT_TLS: "1" }).tls).toBe(true);
    expect(refused({ MQTT_BROKER: "h:1884", MQTT_PORT: "1885" })).toBe("ERROR: MQTT_BROKER 'h:1884' and MQTT_PORT=1885 name different ports; give the port in one of them");
    expect(refused({ MQTT_BROKER: "mqtts://h", MQTT_TLS: "0" })).toBe("ERROR: MQTT_BROKER 'mqtts://h' and MQTT_TLS=0 disagree about TLS; unset MQTT_TLS (mqtts:// means TLS, mqtt:// means none)");
    expect(refused({ MQTT_BROKER: "mqtt://h", MQTT_TLS: "1" })).toContain("disagree about TLS");
  });

  test("anything else is a usage error that shows the accepted forms", () => {
    for (const bad of ["127.0.0.1:", "h:0", "h:65536", "h:http", "h:1883:1", "tcp://h:1883", "http://h", "mqtt://user:pw@h", "mqtt://h/x", "my host", "-h", "[nope]:1", "h/"]) {
      expect(refused({ MQTT_BROKER: bad })).toStartWith(`ERROR: MQTT_BROKER must be a host, host:port or mqtt://host:port (got '${bad}'); `);
    }
    expect(refused({ MQTT_BROKER: "mqtt://u:p@h" })).toContain("give the username and password in MQTT_USERNAME and MQTT_PASSWORD_FILE");
    expect(refused({ MQTT_BROKER: "ssl://h" })).toContain("the URL forms are mqtt:// and mqtts://");
  });

  test("parseBrokerAddress leaves out what the address does not say", () => {
    expect(parseBrokerAddress("h")).toEqual({ host: "h" });
    expect(parseBrokerAddress("mqtt://h:1")).toEqual({ host: "h", port: 1, tls: false });
  });
});

describe("MQTT_BROKER naming a cluster's nodes", () => {
  test("each node with its port or the common one; connections go to the first unless told", () => {
    const c = brokerConfigFromEnv({ MQTT_BROKER: "n1:1883, n2 ,[::1]:1999" });
    expect(c.endpoints).toEqual([
      { host: "n1", port: 1883 },
      { host: "n2", port: 1883 },
      { host: "::1", port: 1999 },
    ]);
    expect([c.host, c.port]).toEqual(["n1", 1883]);
    expect(describeBroker(c)).toBe("n1:1883,n2:1883,[::1]:1999");
    expect([onEndpoint(c, 2).host, onEndpoint(c, 2).port]).toEqual(["::1", 1999]);
    expect(onEndpoint(c, 4).host).toBe("n2"); // modulo their number
    expect(onEndpoint(c, 1).endpoints).toBe(c.endpoints);
    expect(brokerConfigFromEnv({ MQTT_BROKER: "a,b", MQTT_PORT: "1884" }).endpoints).toEqual([
      { host: "a", port: 1884 },
      { host: "b", port: 1884 },
    ]);
    expect(brokerConfigFromEnv({ MQTT_BROKER: "mqtts://a,mqtts://b:9000" }).endpoints).toEqual([
      { host: "a", port: 8883 },
      { host: "b", port: 9000 },
    ]);
  });

  test("a single address is one endpoint, as before", () => {
    const c = brokerConfigFromEnv({ MQTT_BROKER: "h:1884" });
    expect(c.endpoints).toEqual([{ host: "h", port: 1884 }]);
    expect(describeBroker(c)).toBe("h:1884");
    expect(brokerConfigFromEnv({}).endpoints).toEqual([{ host: "127.0.0.1", port: 1883 }]);
  });

  test("refused: an empty entry, mixed schemes, a port MQTT_PORT contradicts, a node named twice, a bad entry", () => {
    expect(refused({ MQTT_BROKER: "a,,b" })).toBe("ERROR: MQTT_BROKER lists an empty address (got 'a,,b'); separate the nodes' addresses with commas: host1:1883,host2:1883");
    expect(refused({ MQTT_BROKER: "a," })).toContain("lists an empty address");
    expect(refused({ MQTT_BROKER: "mqtt://a,mqtts://b" })).toBe("ERROR: MQTT_BROKER 'mqtt://a,mqtts://b' mixes mqtt:// and mqtts://; the nodes of one broker take the same scheme");
    expect(refused({ MQTT_BROKER: "mqtts://a,b", MQTT_TLS: "0" })).toContain("disagree about TLS");
    expect(refused({ MQTT_BROKER: "a:1884,b", MQTT_PORT: "1885" })).toContain("name different ports");
    expect(refused({ MQTT_BROKER: "a:1883,a" })).toBe("ERROR: MQTT_BROKER names a:1883 twice (got 'a:1883,a')");
    expect(refused({ MQTT_BROKER: "a,my host" })).toStartWith("ERROR: MQTT_BROKER must be a host, host:port or mqtt://host:port (got 'my host')");
  });
});
