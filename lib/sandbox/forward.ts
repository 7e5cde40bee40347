// mam's own commands from inside a sandbox (docs/sandbox.md#reports). The sandbox hides the
// workspace's .mam/ (the registry, every job's record and token), so the few commands an agent
// runs there (its job's `mam job event` and `mam job status`, `mam status`, its hooks' `mam
// agent-report`) go through a socket to the agent's supervisor outside (`mam sandbox exec`), which
// runs them as that agent: only for jobs given to it, never for another session or workspace.
// The socket is the agent's identity; it holds no token.
//
// One request per connection: a JSON line {argv, stdin} in, a JSON line {code, stdout, stderr} out.
import { spawn } from "node:child_process";
import { createConnection, createServer, type Server } from "node:net";
import { constants } from "node:os";
import { isValidJobId } from "../sys/names.ts";
import { visible } from "../sys/sanitize.ts";
import { selfCommand } from "../sys/self.ts";

/** the commands that go through, by their words */
const FORWARDED: string[][] = [["job", "event"], ["job", "status"], ["status"], ["agent-report"]];
/** flags that would act for someone else (another session, or a token's holder) */
const REFUSED_FLAGS = ["--session", "--token"];

/** the values given to `--workspace` (`--workspace W` or `--workspace=W`) */
function workspacesNamed(argv: string[]): string[] {
  return argv.flatMap((a, i) => (a === "--workspace" ? [argv[i + 1] ?? ""] : a.startsWith("--workspace=") ? [a.slice(12)] : []));
}

/** the command words of `argv` when it is one that goes through, else undefined */
export function forwardedCommand(argv: string[]): string[] | undefined {
  return FORWARDED.find((words) => words.every((w, i) => argv[i] === w));
}

/**
 * why `argv` must not run for `session` (undefined: it may). `jobAgent` says which session a
 * job was given to (undefined: no such job here)
 */
export function refuseForward(argv: string[], session: string, ws: string, jobAgent: JobAgent): string | undefined {
  const cmd = forwardedCommand(argv);
  if (!cmd) return `inside a sandbox mam runs only ${FORWARDED.map((w) => `\`mam ${w.join(" ")}\``).join(", ")}`;
  const bad = argv.find((a) => REFUSED_FLAGS.some((f) => a === f || a.startsWith(`${f}=`)));
  if (bad) return `${bad.split("=")[0]} is not taken from inside a sandbox (mam acts there for ${session} in its own workspace)`;
  // the job header names the workspace: its own only
  const other = workspacesNamed(argv).find((w) => w !== ws);
  if (other !== undefined) return `--workspace ${other}: a sandboxed agent acts in its own workspace (${ws}) only`;
  if (cmd[0] === "job") {
    const id = argv[cmd.length];
    if (id === undefined || id.startsWith("-")) return `give the job id first: mam ${cmd.join(" ")} ID …`;
    if (!isValidJobId(id)) return `invalid job id '${visible(id.slice(0, 40))}' (8 lowercase hex digits)`;
    const to = jobAgent(id);
    if (to === undefined) return `no job ${id} in this workspace`;
    if (to !== session) return `job ${id} is not ${session}'s: a sandboxed agent reports on its own jobs only`;
  }
  return undefined;
}

/** a shell's exit status for a process that ended with `code` or by signal `sig` */
export const exitStatus = (code: number | null, sig: NodeJS.Signals | null): number => code ?? 128 + (sig ? (constants.signals[sig] ?? 1) : 1);

export interface Reply {
  code: number;
  stdout: string;
  stderr: string;
}

const MAX_REQUEST = 1 << 20;
const RUN_TIMEOUT_MS = 120_000;

/** which session a job was given to (undefined: no such job in the workspace) */
export type JobAgent = (id: string) => string | undefined;

/** the supervisor's side: serve `path` for `session` of workspace `ws` until closed */
export function serveReports(path: string, ws: string, session: string, env: NodeJS.ProcessEnv, jobAgent: JobAgent): Server {
  const server = createServer((sock) => {
    let buf = "";
    let done = false;
    const answer = (r: Reply) => {
      if (done) return;
      done = true;
      sock.end(`${JSON.stringify(r)}\n`);
    };
    sock.setEncoding("utf8");
    sock.on("error", () => {});
    sock.on("data", (d: string) => {
      buf += d;
      if (buf.length > MAX_REQUEST) return answer({ code: 2, stdout: "", stderr: "ERROR: request too large\n" });
      const nl = buf.indexOf("\n");
      if (nl < 0 || done) return;
      let req: { argv?: unknown; stdin?: unknown };
      try {
        req = JSON.parse(buf.slice(0, nl));
      } catch {
        return answer({ code: 2, stdout: "", stderr: "ERROR: not a request\n" });
      }
      const argv = Array.isArray(req.argv) && req.argv.every((a) => typeof a === "string") ? (req.argv as string[]) : undefined;
      if (!argv) return answer({ code: 2, stdout: "", stderr: "ERROR: not a request\n" });
      const why = refuseForward(argv, session, ws, jobAgent);
      if (why) return answer({ code: 2, stdout: "", stderr: `ERROR: ${why}\n` });
      void runAs(argv, typeof req.stdin === "string" ? req.stdin : "", ws, session, env).then(answer);
    });
  });
  server.listen(path);
  return server;
}

/** run mam's `argv` as the agent would outside: its session, its workspace */
function runAs(argv: string[], stdin: string, ws: string, session: string, env: NodeJS.ProcessEnv): Promise<Reply> {
  const [cmd, ...pre] = selfCommand();
  return new Promise((resolve) => {
    const p = spawn(cmd!, [...pre, ...argv], { cwd: ws, env: { ...env, MAM_SESSION: session, MAM_WORKSPACE: ws, MAM_SANDBOX_SOCKET: "" }, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    const t = setTimeout(() => p.kill("SIGTERM"), RUN_TIMEOUT_MS);
    p.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    p.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    p.stdin.on("error", () => {});
    p.stdin.end(stdin);
    p.on("error", (e) => {
      clearTimeout(t);
      resolve({ code: 1, stdout, stderr: `${stderr}ERROR: ${e.message}\n` });
    });
    p.on("close", (code, sig) => {
      clearTimeout(t);
      resolve({ code: exitStatus(code, sig), stdout, stderr });
    });
  });
}

/** the agent's side: send `argv` (and stdin) to the supervisor at `path`, print its answer */
export async function forwardToSupervisor(path: string, argv: string[], readStdin: boolean): Promise<Reply> {
  const stdin = readStdin ? await Bun.stdin.text() : "";
  return new Promise((resolve) => {
    const sock = createConnection(path);
    let buf = "";
    sock.setEncoding("utf8");
    sock.on("connect", () => sock.write(`${JSON.stringify({ argv, stdin })}\n`));
    sock.on("data", (d: string) => (buf += d));
    sock.on("error", (e) => resolve({ code: 1, stdout: "", stderr: `ERROR: mam's supervisor of this sandbox does not answer at ${path} (${e.message})\nhint: the agent's sandbox was started by \`mam sandbox exec\`; resume the session (mam resume) to start it again\n` }));
    sock.on("close", () => {
      try {
        resolve(JSON.parse(buf.trim()) as Reply);
      } catch {
        resolve({ code: 1, stdout: "", stderr: `ERROR: mam's supervisor of this sandbox closed without an answer\n` });
      }
    });
  });
}
