// A pane's terminal: a real bash reading commands from a pipe (no pty), its output captured into
// a Screen, and a canonical-mode "line discipline" in front of its input, like a tty: typed text
// is echoed and collected until Enter, Backspace edits the line, Ctrl-C drops the line and sends
// SIGINT to the foreground job, Ctrl-D on an empty line at the prompt ends the shell.
//
// The shell is a plain `bash --norc --noprofile` that first sources (BASH_ENV) a small read-eval
// loop: it prints "$ " as its prompt and marks the start and end of every command with private
// OSC sequences, so the server knows when the shell owns the foreground (the marks are stripped
// from the output).
import type { Subprocess } from "bun";
import { keyBytes } from "../common/keys.ts";
import { foregroundJob, stdinLink } from "./procfs.ts";
import { Screen } from "./screen.ts";

const MARK = "\x1b]7777;fake-herdr;";
const MARK_RE = /\x1b\]7777;fake-herdr;([BE])(?:;(\d+))?\x07/g;

/** the shell's read-eval loop; bash sources it through BASH_ENV so its argv stays plain */
export const SHELL_LOOP = `unset BASH_ENV
exec 2>&1
__fh_mark() { printf '\\033]7777;fake-herdr;%s\\007' "$1"; }
while :; do
  printf '$ '
  IFS= read -r __fh_line || exit 0
  __fh_mark B
  eval "$__fh_line"
  __fh_mark "E;$?"
done
exit 0`;

export interface InputEntry {
  /** ms since epoch */
  at: number;
  kind: "text" | "keys";
  text?: string;
  keys?: string[];
}

export interface TerminalOptions {
  cwd: string;
  /** a file holding SHELL_LOOP */
  loopFile: string;
  /** the input log to append to (kept across a restart) */
  inputs?: InputEntry[];
  env: Record<string, string>;
  onOutput(): void;
  onCommandStart(): void;
  onCommandEnd(code: number): void;
  onExit(code: number): void;
}

export class Terminal {
  readonly proc: Subprocess<"pipe", "pipe", "ignore">;
  readonly pid: number;
  readonly screen = new Screen();
  readonly inputs: InputEntry[];
  /** the kernel name of the pane's input (the shell's fd 0), to tell foreground from background */
  input: string | undefined;
  /** the shell is running a command (between its B and E marks) */
  running = false;
  /** lines handed to the shell while it sat at its prompt, not yet started */
  queued = 0;
  starts = 0;
  ends = 0;
  lastExitCode: number | undefined;
  exited = false;
  private line = "";
  private carry = "";
  private inputClosed = false;

  constructor(private readonly o: TerminalOptions) {
    this.inputs = o.inputs ?? [];
    this.proc = Bun.spawn(["bash", "--norc", "--noprofile"], {
      cwd: o.cwd,
      env: { ...o.env, BASH_ENV: o.loopFile },
      stdin: "pipe",
      stdout: "pipe",
      stderr: "ignore",
      detached: true,
    });
    this.pid = this.proc.pid;
    void this.pump();
    void this.proc.exited.then((code) => {
      this.exited = true;
      o.onExit(code);
    });
  }

  /** the shell owns the foreground: nothing running, nothing queued, no foreground child */
  shellFree(): boolean {
    if (this.running || this.queued > 0) return false;
    return this.foreground().length === 0;
  }

  foreground(): number[] {
    if (this.exited) return [];
    this.input ??= stdinLink(this.pid);
    return foregroundJob(this.pid, this.input);
  }

  private async pump(): Promise<void> {
    const dec = new TextDecoder();
    try {
      for await (const chunk of this.proc.stdout) this.feed(dec.decode(chunk, { stream: true }));
    } catch {}
    if (this.carry) this.feed("", true);
  }

  /** split the shell's output into text (to the screen) and command marks */
  private feed(chunk: string, flush = false): void {
    let s = this.carry + chunk;
    this.carry = "";
    if (!flush) {
      const i = s.lastIndexOf("\x1b");
      if (i >= 0) {
        const tail = s.slice(i);
        if ((MARK.startsWith(tail) || tail.startsWith(MARK)) && !tail.includes("\x07")) {
          this.carry = tail;
          s = s.slice(0, i);
        }
      }
    }
    let last = 0;
    for (const m of s.matchAll(MARK_RE)) {
      this.screen.write(s.slice(last, m.index));
      last = m.index! + m[0].length;
      if (m[1] === "B") {
        this.running = true;
        if (this.queued > 0) this.queued--;
        this.starts++;
        this.o.onCommandStart();
      } else {
        this.running = false;
        this.ends++;
        this.lastExitCode = Number(m[2] ?? 0);
        this.o.onCommandEnd(this.lastExitCode);
      }
    }
    this.screen.write(s.slice(last));
    this.o.onOutput();
  }

  private writeInput(bytes: string): void {
    if (this.inputClosed || this.exited) return;
    try {
      this.proc.stdin.write(bytes);
      this.proc.stdin.flush();
    } catch {}
  }

  /** type text (raw bytes) through the line discipline */
  typeText(text: string, log = true): void {
    if (log) this.inputs.push({ at: Date.now(), kind: "text", text });
    for (const ch of text) this.inputChar(ch);
    this.o.onOutput();
  }

  /**
   * the app asked for bracketed paste (DECSET 2004). Pipe panes cannot see it, so it stays false
   * here; a pty pane with a terminal screen tracks it.
   */
  bracketedPaste = false;

  /** herdr's encode_api_text: the text wrapped in ESC[200~ … ESC[201~ when the app asked for it */
  pasteText(text: string): void {
    this.typeText(this.bracketedPaste ? `\x1b[200~${text}\x1b[201~` : text);
  }

  /** press keys (already validated) */
  pressKeys(keys: string[], log = true): void {
    if (log) this.inputs.push({ at: Date.now(), kind: "keys", keys: [...keys] });
    for (const k of keys) for (const ch of keyBytes(k) ?? "") this.inputChar(ch);
    this.o.onOutput();
  }

  private inputChar(ch: string): void {
    switch (ch) {
      case "\r":
      case "\n": {
        const line = this.line;
        this.line = "";
        this.screen.write("\r\n");
        if (!this.running && this.queued === 0 && this.foreground().length === 0) this.queued++;
        this.writeInput(`${line}\n`);
        return;
      }
      case "\x7f":
      case "\b":
        if (this.line.length > 0) {
          this.line = [...this.line].slice(0, -1).join("");
          this.screen.write("\b \b");
        }
        return;
      case "\x15": // Ctrl-U
        this.line = "";
        this.screen.write("\r\n");
        return;
      case "\x03": // Ctrl-C
        this.line = "";
        this.screen.write("^C\r\n");
        this.signalForeground("SIGINT");
        return;
      case "\x1c": // Ctrl-\
        this.line = "";
        this.signalForeground("SIGQUIT");
        return;
      case "\x1a": // Ctrl-Z: no job control in the fake
        return;
      case "\x04": // Ctrl-D
        if (this.line === "") {
          if (this.shellFree()) {
            this.inputClosed = true;
            try {
              this.proc.stdin.end();
            } catch {}
          }
        } else {
          const line = this.line;
          this.line = "";
          this.writeInput(line);
        }
        return;
      default:
        this.line += ch;
        if (ch >= " " && ch !== "\x7f") this.screen.write(ch);
        else if (ch === "\t") this.screen.write("\t");
        else this.screen.write(`^${String.fromCharCode(ch.charCodeAt(0) + 64)}`);
    }
  }

  signalForeground(sig: NodeJS.Signals): void {
    for (const pid of this.foreground()) {
      try {
        process.kill(pid, sig);
      } catch {}
    }
  }

  /** kill the pane's whole process group (SIGHUP as a closing terminal, then SIGKILL) */
  kill(): Promise<void> {
    const grp = -this.pid;
    try {
      process.kill(grp, "SIGHUP");
    } catch {}
    try {
      this.proc.stdin.end();
    } catch {}
    const t = setTimeout(() => {
      try {
        process.kill(grp, "SIGKILL");
      } catch {}
    }, 500);
    return this.proc.exited.then(
      () => {
        // the shell is gone; its job may linger a moment: make sure the group dies
        setTimeout(() => {
          try {
            process.kill(grp, "SIGKILL");
          } catch {}
          clearTimeout(t);
        }, 200);
      },
      () => clearTimeout(t),
    );
  }

  /** kill -9 the group at once (fake.pane.exit, server stop fallback) */
  killNow(): void {
    try {
      process.kill(-this.pid, "SIGKILL");
    } catch {}
  }
}
