// Shared bench fixtures.

/** a registry with n running claude rows of the usual shape */
export function benchRegistry(n: number, o: { name?: string; server?: string; ws?: string; paneWs?: string } = {}): string {
  const name = o.name ?? "bench-worker";
  const server = o.server ?? "mam";
  const ws = o.ws ?? "/abs/workspace";
  const paneWs = o.paneWs ?? "w1";
  const rows: string[] = [];
  for (let i = 0; i < n; i++) {
    rows.push(
      `  - name: ${name}-${i}`,
      "    status: running",
      "    role: worker",
      "    agent: claude",
      `    herdr_session: ${server}`,
      `    herdr_server: ${server}`,
      '    herdr_session_created_at: "2026-10-11T00:00:00Z"',
      "    herdr_session_epoch: 1791590400",
      `    pane: {id: "${paneWs}:p${i}", index: ${i}, pid: ${4000 + i}, cmd: claude, cmd_full: claude --session-id 3f0c, cwd: ${ws}}`,
      "    session_id_source: assigned",
      `    claude_session_id_own: 3f0c1b2a-${String(i).padStart(4, "0")}-4bbb-8ccc-dddddddddddd`,
      "    last_visible_status: running",
    );
  }
  return `herdr_sessions:\n${rows.join("\n")}\ntmux_sessions: []\n`;
}
