// `--net model` (docs/sandbox.md#network): the sandbox has a network namespace of its own, whose
// only interface is its loopback, and reaches the few endpoints it may through mam's relays:
//   * an endpoint on this machine's loopback (a local model server, a test's scripted endpoint)
//     is served inside at the same address and port, so the agent's base URL needs no change;
//   * an endpoint elsewhere (api.anthropic.com:443) through an HTTP CONNECT proxy inside, named by
//     HTTPS_PROXY, which only opens a tunnel to an allowed HOST:PORT (TLS goes through untouched).
// Each relay is two halves joined by a unix socket in the supervisor's socket folder: inside, a
// TCP listener (`mam sandbox exec --inner`); outside, the supervisor, which alone can connect out.
import { createConnection, createServer, type Server, type Socket } from "node:net";
import { isLoopback, parseEndpoint } from "./plan.ts";

/** a relay's unix socket name for endpoint number `i`; the proxy's */
export const relaySocket = (i: number) => `net-${i}.sock`;
export const PROXY_SOCKET = "proxy.sock";

export interface Relays {
  /** loopback endpoints, served inside at their own address: [HOST:PORT, socket name] */
  local: [string, string][];
  /** the endpoints only the CONNECT proxy reaches */
  remote: string[];
}

export function relaysFor(allow: string[]): Relays {
  const local: [string, string][] = [];
  const remote: string[] = [];
  allow.forEach((a, i) => {
    const e = parseEndpoint(a);
    if (e && isLoopback(e.host)) local.push([a, relaySocket(i)]);
    else if (e) remote.push(a);
  });
  return { local, remote };
}

function pipeBoth(a: Socket, b: Socket): void {
  a.pipe(b);
  b.pipe(a);
  const end = () => {
    a.destroy();
    b.destroy();
  };
  a.on("error", end);
  b.on("error", end);
  a.on("close", end);
  b.on("close", end);
}

/** outside: each connection on unix socket `path` goes on to HOST:PORT */
export function serveOut(path: string, endpoint: string): Server {
  const e = parseEndpoint(endpoint)!;
  const s = createServer((c) => pipeBoth(c, createConnection({ host: e.host, port: e.port })));
  s.listen(path);
  return s;
}

/** the CONNECT target of a request head, when it asks for one */
export function connectTarget(head: string): string | undefined {
  const m = /^CONNECT (\S+) HTTP\/1\.[01]\r\n/.exec(head);
  return m?.[1];
}

/** outside: an HTTP CONNECT proxy on unix socket `path` that opens tunnels to `allow` only */
export function serveProxy(path: string, allow: string[]): Server {
  const s = createServer((c) => {
    let head = Buffer.alloc(0);
    const onData = (d: Buffer) => {
      head = Buffer.concat([head, d]);
      const end = head.indexOf("\r\n\r\n");
      if (end < 0) {
        if (head.length > 16_384) c.end("HTTP/1.1 431 Request Header Fields Too Large\r\n\r\n");
        return;
      }
      c.off("data", onData);
      const target = connectTarget(head.subarray(0, end + 4).toString("latin1"));
      if (!target) return void c.end("HTTP/1.1 405 Method Not Allowed\r\nConnection: close\r\n\r\nmam's sandbox proxy only opens CONNECT tunnels\n");
      if (!allow.includes(target)) return void c.end(`HTTP/1.1 403 Forbidden\r\nConnection: close\r\n\r\nmam's sandbox (--net model) does not reach ${target}\n`);
      const e = parseEndpoint(target)!;
      const out = createConnection({ host: e.host, port: e.port }, () => {
        c.write("HTTP/1.1 200 Connection Established\r\n\r\n");
        const rest = head.subarray(end + 4);
        if (rest.length) out.write(rest);
        pipeBoth(c, out);
      });
      out.on("error", () => c.end("HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\n\r\n"));
    };
    c.on("data", onData);
    c.on("error", () => {});
  });
  s.listen(path);
  return s;
}

/** inside: TCP `host:port` goes on to unix socket `path` (resolves once listening) */
export function listenIn(host: string, port: number, path: string): Promise<Server> {
  return new Promise((resolve, reject) => {
    const s = createServer((c) => pipeBoth(c, createConnection(path)));
    s.once("error", reject);
    s.listen({ host, port }, () => resolve(s));
  });
}
