// `mam ui` before the token is looked at (issue 23 item 13, BUG-8): a malformed Host header
// (`x:1:2`, `127.0.0.1:P.evil.com`, `a b`) is a 421 like any other wrong Host, never a 500 with
// Bun's development error page (which shows the workspace's path and source lines).
import { afterEach, beforeEach, expect, test } from "bun:test";
import { type RunningUi, startUiProcess } from "../helpers/browser.ts";
import { makeSandbox, type Sandbox } from "../helpers/sandbox.ts";

let sb: Sandbox;
let ui: RunningUi | undefined;
beforeEach(() => {
  sb = makeSandbox("mam-uih-");
});
afterEach(async () => {
  if (ui) await ui.stop("SIGKILL");
  ui = undefined;
  await sb.cleanup();
});

/** one raw HTTP/1.1 request (fetch cannot send a malformed Host); the whole answer */
function raw(port: number, request: string): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    let got = "";
    Bun.connect({
      hostname: "127.0.0.1",
      port,
      socket: {
        open: (s) => void s.write(request),
        data: (_s, d) => void (got += d.toString()),
        error: (_s, e) => reject(e),
        close: () => resolve(got),
      },
    }).catch(reject);
  });
}

test("a malformed Host gets 421 and a one-line reason, never Bun's error page", async () => {
  ui = await startUiProcess(sb, sb.env);
  const port = ui.port;
  for (const host of ["x:1:2", `127.0.0.1:${port}.evil.com`, "a b", "[::1", "evil.com", "", `127.0.0.1:${port}:1`]) {
    for (const path of ["/", `/?token=${ui.token}`, "/api/state", "/api/action"]) {
      const answer = await raw(port, `GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
      const [head, body = ""] = answer.split("\r\n\r\n");
      expect(head!.split("\r\n")[0], `Host '${host}' ${path}`).toBe("HTTP/1.1 421 Misdirected Request");
      expect(body, `Host '${host}'`).toBe(`wrong Host header (only 127.0.0.1:${port} or localhost:${port})\n`);
      expect(answer).not.toContain(sb.ws);
    }
  }
  // the right Host still works
  const ok = await raw(port, `GET /api/state?token=${ui.token} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`);
  expect(ok.split("\r\n")[0]).toBe("HTTP/1.1 200 OK");
  expect(ui.stderr()).not.toContain("internal error");
});
