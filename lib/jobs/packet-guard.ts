// A receiver never holds a message larger than it will accept (SPEC §7.2: payloads above
// MAX_EVENT_BYTES are dropped). MQTT.js reads a whole packet into memory before anyone sees it,
// and MQTT 3.1.1 (what mam speaks, and all `mam broker` speaks) has no way to tell the broker a
// maximum; so a stream sits between the socket and MQTT.js's parser and reads the packets' fixed
// headers as bytes go by. A PUBLISH whose payload is above the limit is handed on as the same
// PUBLISH (flags, topic, packet id) with oversizedPayload(size) as its payload, and the rest of its
// bytes are skipped as they arrive: the client acknowledges it as usual (so the broker does not
// send it again) and the receiver drops it as oversized, and memory stays flat whatever the size.
// Everything else goes through unchanged; a header this stream cannot read (a malformed length)
// is left to MQTT.js, which closes the connection.
import type { MqttClient } from "mqtt";
import { Transform, type TransformCallback } from "node:stream";
import { MAX_EVENT_BYTES, oversizedPayload } from "./event.ts";

const PUBLISH = 3;

type State =
  /** reading a fixed header: the type byte and the remaining length (1-4 bytes) */
  | { at: "header" }
  /** a large PUBLISH: reading its variable header (topic, packet id) to learn the payload size */
  | { at: "publish"; first: number; remaining: number; need: number }
  /** forwarding this many more bytes */
  | { at: "pass"; left: number }
  /** skipping this many more bytes */
  | { at: "skip"; left: number }
  /** a header that could not be read: everything goes through as it is */
  | { at: "raw" };

function remainingLengthBytes(n: number): Buffer {
  const out: number[] = [];
  do {
    let b = n % 128;
    n = Math.floor(n / 128);
    if (n > 0) b |= 0x80;
    out.push(b);
  } while (n > 0);
  return Buffer.from(out);
}

export class PacketGuard extends Transform {
  private state: State = { at: "header" };
  private held: Buffer = Buffer.alloc(0);

  constructor(private readonly limit: number = MAX_EVENT_BYTES) {
    super();
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    let buf: Buffer = this.held.length ? Buffer.concat([this.held, chunk]) : chunk;
    this.held = Buffer.alloc(0);
    while (buf.length > 0) {
      const st = this.state;
      if (st.at === "raw") {
        this.push(buf);
        break;
      }
      if (st.at === "pass" || st.at === "skip") {
        const n = Math.min(st.left, buf.length);
        if (st.at === "pass") this.push(buf.subarray(0, n));
        buf = buf.subarray(n);
        st.left -= n;
        if (st.left === 0) this.state = { at: "header" };
        continue;
      }
      if (st.at === "header") {
        // the type byte and up to 4 length bytes
        let remaining = 0;
        let mult = 1;
        let i = 1;
        let complete = false;
        for (; i < buf.length && i <= 4; i++) {
          remaining += (buf[i]! & 0x7f) * mult;
          mult *= 128;
          if ((buf[i]! & 0x80) === 0) {
            complete = true;
            break;
          }
        }
        if (!complete) {
          if (i > 4) {
            this.state = { at: "raw" }; // a malformed length: MQTT.js reports it
            continue;
          }
          this.held = buf; // the header is split across chunks
          break;
        }
        const first = buf[0]!;
        const headerLen = i + 1;
        if (first >> 4 === PUBLISH && remaining > this.limit) {
          const qos = (first >> 1) & 3;
          this.state = { at: "publish", first, remaining, need: qos > 0 ? 4 : 2 };
          buf = buf.subarray(headerLen);
          continue;
        }
        this.push(buf.subarray(0, headerLen));
        buf = buf.subarray(headerLen);
        this.state = remaining > 0 ? { at: "pass", left: remaining } : { at: "header" };
        continue;
      }
      // st.at === "publish": topic length (2 bytes), topic, packet id (2 bytes, QoS 1 and 2)
      if (buf.length < 2) {
        this.held = buf;
        break;
      }
      const topicLen = buf.readUInt16BE(0);
      const qos = (st.first >> 1) & 3;
      const varLen = 2 + topicLen + (qos > 0 ? 2 : 0);
      if (varLen > st.remaining) {
        this.state = { at: "raw" }; // inconsistent: let MQTT.js see it as it is
        this.push(Buffer.concat([Buffer.from([st.first]), remainingLengthBytes(st.remaining)]));
        continue;
      }
      if (buf.length < varLen) {
        this.held = buf;
        break;
      }
      const payloadLen = st.remaining - varLen;
      const variable = buf.subarray(0, varLen);
      buf = buf.subarray(varLen);
      if (payloadLen <= this.limit) {
        this.push(Buffer.concat([Buffer.from([st.first]), remainingLengthBytes(st.remaining), variable]));
        this.state = payloadLen > 0 ? { at: "pass", left: payloadLen } : { at: "header" };
        continue;
      }
      const mark = oversizedPayload(payloadLen);
      this.push(Buffer.concat([Buffer.from([st.first]), remainingLengthBytes(varLen + mark.length), variable, mark]));
      this.state = { at: "skip", left: payloadLen };
    }
    done();
  }
}

/**
 * Put a PacketGuard between a client's socket and its parser, for every connection it makes.
 * Call it on a client made with `manualConnect: true`, before `client.connect()`.
 */
export function guardIncoming(client: MqttClient, limit: number = MAX_EVENT_BYTES): void {
  type Stream = ReturnType<StreamBuilder>;
  type StreamBuilder = (c: MqttClient) => { pipe<T extends NodeJS.WritableStream>(dest: T, opts?: { end?: boolean }): T };
  const c = client as unknown as { streamBuilder: StreamBuilder };
  const build = c.streamBuilder;
  c.streamBuilder = (cl: MqttClient): Stream => {
    const socket = build(cl);
    const pipe = socket.pipe.bind(socket);
    socket.pipe = <T extends NodeJS.WritableStream>(dest: T, opts?: { end?: boolean }): T => {
      const guard = new PacketGuard(limit);
      pipe(guard);
      return guard.pipe(dest, opts);
    };
    return socket;
  };
}
