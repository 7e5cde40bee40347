// A pane's terminal: a real pty (Bun.spawn's `terminal` option: the shell is a session leader
// with the pty as its controlling tty, job control works) running the user's shell the way herdr
// 0.8.0 starts it on Linux (src/pane.rs pane_shell_command_builder: `$SHELL`, else /bin/sh, with
// no arguments, so an interactive non-login shell that reads its rc files; herdr's
// `shell_mode = login`, the macOS default, is FAKE_HERDR_SHELL_MODE=login: argv0 "-<shell>").
// Everything the pty prints goes to a headless terminal emulator (screen.ts). Input is written to
// the pty as bytes: the kernel's line discipline and the shell do the rest (echo, Ctrl-C, …).
//
// What runs in the foreground comes from the tty: the shell's tpgid and that group's members
// (procfs.ts foregroundJob), as herdr reads it. Closing the pane closes the pty: the kernel
// hangs up the session (SIGHUP); whatever of the session is still alive 500 ms later is killed.
import type { Subprocess } from "bun";
import { keyBytes } from "../common/keys.ts";
import { foregroundJob, sessionMembers, stat } from "./procfs.ts";
import { COLS, ROWS, Screen } from "./screen.ts";

export interface InputEntry {
  /** ms since epoch */
  at: number;
  kind: "text" | "keys";
  text?: string;
  keys?: string[];
}

export interface TerminalOptions {
  cwd: string;
  /** the shell argv (default: shellArgv(env)) */
  argv?: string[];
  /** argv0 for the shell (a login shell's "-bash") */
  argv0?: string;
  /** the input log to append to (kept across a restart) */
  inputs?: InputEntry[];
  env: Record<string, string>;
  cols?: number;
  rows?: number;
  onOutput(): void;
  onExit(code: number): void;
}

/** the pane shell herdr 0.8.0 runs: $SHELL (trimmed, non-empty), else /bin/sh */
export function paneShell(env: Record<string, string | undefined>): string {
  const s = env.SHELL?.trim();
  return s ? s : "/bin/sh";
}

/** argv and argv0 of the pane's shell for a shell mode ("login": argv0 "-<name>") */
export function shellCommand(env: Record<string, string | undefined>, mode: string | undefined): { argv: string[]; argv0?: string } {
  const shell = paneShell(env);
  if (mode === "login") return { argv: [shell], argv0: `-${shell.slice(shell.lastIndexOf("/") + 1)}` };
  return { argv: [shell] };
}

export class Terminal {
  readonly proc: Subprocess;
  readonly pid: number;
  readonly screen: Screen;
  readonly inputs: InputEntry[];
  exited = false;
  /** how often the foreground was seen going back to the shell (a command ended) */
  ends = 0;
  private lastFg: number | undefined;
  private closed = false;
  /** the shell's start time: its session is swept only while the id is still ours */
  private readonly startTime: number | undefined;

  constructor(o: TerminalOptions) {
    this.inputs = o.inputs ?? [];
    const cols = o.cols ?? COLS;
    const rows = o.rows ?? ROWS;
    this.screen = new Screen(cols, rows);
    const cmd = o.argv ? { argv: o.argv, argv0: o.argv0 } : shellCommand(o.env, undefined);
    this.proc = Bun.spawn(cmd.argv, {
      cwd: o.cwd,
      env: o.env,
      ...(cmd.argv0 ? { argv0: cmd.argv0 } : {}),
      terminal: {
        cols,
        rows,
        name: o.env.TERM ?? "xterm-256color",
        data: (_t, bytes) => {
          if (this.closed) return;
          void this.screen.write(bytes);
          o.onOutput();
        },
      },
    });
    this.pid = this.proc.pid;
    this.startTime = stat(this.pid)?.startTime;
    void this.proc.exited.then((code) => {
      this.exited = true;
      o.onExit(code ?? 1);
    });
  }

  /**
   * The foreground job: its process group and members (the shell alone when it owns the
   * terminal). Counts a return of the foreground to the shell as a command's end.
   */
  job(): { pgid: number; pids: number[] } | undefined {
    if (this.exited) return undefined;
    const j = foregroundJob(this.pid);
    const fg = j?.pgid;
    if (fg === this.pid && this.lastFg !== undefined && this.lastFg !== this.pid) this.ends++;
    if (fg !== undefined) this.lastFg = fg;
    return j;
  }

  /** the foreground processes other than the shell, group leader first */
  foreground(): number[] {
    const j = this.job();
    if (!j) return [];
    const rest = j.pids.filter((p) => p !== this.pid);
    return rest.includes(j.pgid) ? [j.pgid, ...rest.filter((p) => p !== j.pgid)] : rest;
  }

  /**
   * herdr's available_pane_shell: the shell's own group owns the terminal and the shell is its
   * only member (a startup file's child in the shell's group makes the pane busy).
   */
  shellFree(): boolean {
    const j = this.job();
    return j !== undefined && j.pgid === this.pid && j.pids.every((p) => p === this.pid);
  }

  private writeBytes(bytes: string): void {
    if (this.closed || this.exited || bytes === "") return;
    try {
      this.proc.terminal?.write(bytes);
    } catch {}
  }

  /** raw bytes, as herdr's pane.send_text writes them (never bracketed) */
  typeText(text: string, log = true): void {
    if (log) this.inputs.push({ at: Date.now(), kind: "text", text });
    this.writeBytes(text);
  }

  /**
   * text as herdr's encode_api_text sends it for send_input, run, agent prompt and agent start:
   * wrapped in ESC[200~ … ESC[201~ when the app enabled bracketed paste
   */
  pasteText(text: string, log = true): void {
    if (log) this.inputs.push({ at: Date.now(), kind: "text", text });
    this.writeBytes(this.screen.bracketedPaste ? `\x1b[200~${text}\x1b[201~` : text);
  }

  /** press keys (already validated) */
  pressKeys(keys: string[], log = true): void {
    if (log) this.inputs.push({ at: Date.now(), kind: "keys", keys: [...keys] });
    this.writeBytes(keys.map((k) => keyBytes(k) ?? "").join(""));
  }

  /** the pane's size changed (layout): the pty and the screen follow, the app gets SIGWINCH */
  resize(cols: number, rows: number): void {
    cols = Math.max(2, Math.floor(cols));
    rows = Math.max(1, Math.floor(rows));
    if (cols === this.screen.cols && rows === this.screen.rows) return;
    this.screen.resize(cols, rows);
    if (this.closed || this.exited) return;
    try {
      this.proc.terminal?.resize(cols, rows);
    } catch {}
  }

  /** kill -9 what is left of the pane's session (the shell is its leader) */
  killNow(): void {
    const members = this.startTime === undefined ? [] : sessionMembers(this.pid, this.startTime);
    for (const pid of this.exited ? members : [this.pid, ...members]) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {}
    }
  }

  /** close the pty (SIGHUP to the session, as a closed terminal does), then SIGKILL leftovers */
  kill(): Promise<void> {
    if (!this.closed) {
      this.closed = true;
      try {
        this.proc.terminal?.close();
      } catch {}
      if (!this.exited) {
        try {
          process.kill(this.pid, "SIGHUP");
        } catch {}
      }
    }
    const sweep = () => this.killNow();
    return Promise.race([this.proc.exited, Bun.sleep(500)]).then(async () => {
      // the shell is gone (or did not listen); its jobs may linger a moment
      await Bun.sleep(this.exited ? 100 : 0);
      sweep();
    });
  }
}
