// The embedded MQTT 3.1.1 broker (aedes) behind `mam broker` and `mam demo` (SPEC §8).
import { readFileSync } from "node:fs";
import { sameBytes } from "../sys/digest.ts";
import type { AddressInfo, Server } from "node:net";
import { EXIT, MamError } from "../sys/errors.ts";
import { field } from "../sys/fields.ts";

export interface BrokerOptions {
  host: string;
  /** 0 = any free port */
  port: number;
  username?: string;
  password?: string;
  tlsCertFile?: string;
  tlsKeyFile?: string;
  log?: (line: string) => void;
}

export interface RunningBroker {
  host: string;
  port: number;
  tls: boolean;
  close(): Promise<void>;
}

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return sameBytes(x, y);
}

export async function startBroker(o: BrokerOptions): Promise<RunningBroker> {
  if ((o.username === undefined) !== (o.password === undefined)) {
    throw new MamError(`${field("username")} and ${field("password")} go together`, EXIT.USAGE);
  }
  if ((o.tlsCertFile === undefined) !== (o.tlsKeyFile === undefined)) {
    throw new MamError(`${field("tls_cert")} and ${field("tls_key")} go together`, EXIT.USAGE);
  }
  const { Aedes } = (await import("aedes")) as unknown as { Aedes: { createBroker(opts: object): Promise<AedesLike> } };
  const aedes = await Aedes.createBroker({ drainTimeout: 30_000, heartbeatInterval: 3_600_000 });
  const log = o.log ?? (() => {});
  if (o.username !== undefined) {
    aedes.authenticate = (client, username, password, cb) => {
      const ok = username !== undefined && password !== undefined && same(username, o.username!) && same(password.toString(), o.password!);
      if (!ok) {
        log(`refused client ${client?.id ?? "?"}: bad username or password`);
        const e = Object.assign(new Error("bad username or password"), { returnCode: 4 });
        cb(e, false);
        return;
      }
      cb(null, true);
    };
  }
  aedes.on("clientError", (client: { id?: string } | null, e: Error) => log(`client ${client?.id ?? "?"} error: ${e.message}`));

  let server: Server;
  const tls = o.tlsCertFile !== undefined;
  if (tls) {
    let cert: Buffer, key: Buffer;
    try {
      cert = readFileSync(o.tlsCertFile!);
      key = readFileSync(o.tlsKeyFile!);
    } catch (e) {
      throw new MamError(`cannot read the TLS certificate or key (${(e as Error).message})`, EXIT.FAIL);
    }
    const { createServer } = await import("node:tls");
    server = createServer({ cert, key }, aedes.handle as never) as unknown as Server;
  } else {
    const { createServer } = await import("node:net");
    server = createServer(aedes.handle as never);
  }
  await new Promise<void>((resolve, reject) => {
    server.once("error", (e: NodeJS.ErrnoException) =>
      reject(new MamError(`cannot listen on ${o.host}:${o.port} (${e.code ?? e.message})`, EXIT.FAIL, e.code === "EADDRINUSE" ? `pick another ${field("port")}` : undefined)),
    );
    server.listen(o.port, o.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    host: o.host,
    port,
    tls,
    async close() {
      await new Promise<void>((r) => server.close(() => r()));
      await new Promise<void>((r) => aedes.close(() => r()));
    },
  };
}

interface AedesLike {
  handle: unknown;
  authenticate: (client: { id?: string } | null, username: string | undefined, password: Buffer | undefined, cb: (e: Error | null, ok: boolean) => void) => void;
  on(ev: string, fn: (...a: never[]) => void): void;
  close(cb: () => void): void;
}
