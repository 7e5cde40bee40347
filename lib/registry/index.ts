// The registry `.mam/agent-sessions.yaml` (SPEC §2): the only way mam reads and writes it.
//
// Where:
//   registryPath(workspace, env?)   AGENT_SESSIONS_YAML (relative to the cwd) if set, else
//                                   <workspace>/.mam/agent-sessions.yaml
//   registryLockPath(yaml)          <dir of yaml>/agent-sessions.lock (flock target of every write)
//   registryBackupPath(yaml)        <yaml>.bak (the previous version, kept by every write)
//
// Reading (no lock, creates nothing):
//   readRegistry(path, {duplicateKeys?}): RegistryData
//     A missing or empty file is {herdr_sessions: [], tmux_sessions: []}; absent / null sections
//     are empty lists; unknown fields and top-level keys are kept. A file that does not parse →
//     MamError exit 1 "<path> is not valid YAML (line L: reason)" with the way out that exists as
//     its hint (wayOut: `mam registry restore --yes` when <path>.bak reads, else `mam registry
//     rebuild`); a file that fails validation → MamError exit 1 naming the first problem.
//     Rows are plain objects; change them freely, nothing is written back. Duplicate keys are
//     found by default (the outline scan); {duplicateKeys: false} skips that scan (about 10 ms
//     less for 200 rows in a fresh process; Bun.YAML then keeps the last of duplicate keys,
//     while writes and `registry check` still refuse such a file).
//   registryReader(path) → (opts?) => RegistryData: readRegistry for a long-lived process; the
//     parse is kept while the file is unchanged (inode, size, mtime, ctime), each call gets a copy
//   inspectRegistry(path) → {exists, rows, problems, data}   (registry check: lists every problem)
//
// Writing (the only writer):
//   mutateRegistry(path, (data, tx) => result, {lockBudgetMs?}) → Promise<{result, changed}>
//     1. takes the registry flock (creating the folder 0700; waits up to 60 s, then exit 5),
//     2. reads the file fresh (a broken or invalid file → exit 1, nothing written; a symbolic link
//        or anything but a regular file → exit 1 "refusing to write through …", nothing written:
//        mam never writes through a link, nor replaces one with a file),
//     3. calls fn with a private copy: edit rows in place, push, splice, sort, replace a row with
//        a new object; fn may be async; if it throws, nothing is written and the error propagates,
//     4. validates (validateRegistry with the file as read, see below); a problem → MamError
//        exit 1 with the problem as message, e.g. "role of session 'x' cannot be modified from
//        'a' to 'b'", nothing written,
//     5. nothing changed → nothing written (mtime and inode stay); else only the text of changed
//        rows and keys is rewritten (comments, key order and quoting elsewhere stay), new rows are
//        appended as block maps, and the file is replaced atomically (temp + fsync + rename +
//        fsync dir) after the old version became <path>.bak. New files get mode 0600 and a short
//        header comment; an existing file keeps its mode.
//     Hold the lock briefly: do slow work (multiplexer calls) before or after, then re-check the
//     decision on the fresh data inside fn (the data may have changed since you last read it).
//
//   Role changes: a row's role must match a role the row of the same name and server had in the
//   file as read. A mutation that legitimately changes it (create replacing a stopped row, or
//   adopting the monitor's registration of its own pane) says so inside fn:
//       await mutateRegistry(path, (data, tx) => { tx.allowRoleChange(name); placeRow(data, …); });
//
// Validation (SPEC §2.1): validateRegistry(data, before?, {allowRoleChange?}) → string[]
//   row not a mapping; missing name/status; bad status (running|stopped|terminated|archived);
//   role present but not a non-empty string; pane not a mapping; two running rows of one name on
//   one server (per section: herdr servers and tmux servers are different things); values YAML
//   cannot store; with `before`: role changes. Messages name section, index and name:
//   "herdr_sessions[2] 'api-worker' bad status 'runing'".
//
// Helpers: serverOf(row, section), sectionOf(backend), backendOf(section), findRows(data, name,
//   {section?, server?, status?}), emptyRegistry(), rowCounts(data), DEFAULT_SERVER.
//
// How a write keeps the file: the outline (outline.ts) locates rows and keys; splice.ts rewrites
// only what changed; files the outline cannot describe (anchors, tags, …) are edited through the
// yaml library's Document (document.ts); the result is parsed again and must equal the intended
// data, else the next way is tried, and in the end the file is written anew (never wrong data).
// The three entry points are exported here; the helpers named above live in their own modules
// (load.ts, mutate.ts, paths.ts, rows.ts, types.ts, validate.ts, diff.ts) and are imported from there.
export { type ReadOptions, registryReader } from "./load.ts";
export { type MutateOptions, mutateRegistry, type RegistryTx } from "./mutate.ts";
export { registryPath } from "./paths.ts";
