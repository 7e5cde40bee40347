// mam ui — the page. It draws what the server's view model says (lib/ui/model.ts) and keeps it
// live from one server-sent event stream; it never polls. Every text from the workspace (agent
// output, job details) is escaped before it reaches the DOM.
"use strict";
(() => {
  const token = new URLSearchParams(location.search).get("token") || "";
  const q = (p) => `${p}${p.includes("?") ? "&" : "?"}token=${encodeURIComponent(token)}`;
  const $ = (id) => document.getElementById(id);
  const esc = (s) => String(s ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
  const STATUSES = ["queued", "pending", "running", "completed", "error", "cancelled", "timeout", "budget_exceeded"];
  /** a job's status pill: a waiting job's says its place in line */
  const statusPill = (j) => `<span class="pill st-${esc(j.status)}">${esc(j.status)}${j.position ? ` #${j.position}` : ""}</span>`;
  const LABELLED = new Set(["completed", "error", "cancelled", "timeout", "budget_exceeded", "permission_required"]);
  // shown: how many jobs the list shows (newest first); "show more" adds a page
  const PAGE = 20;
  // view: the jobs as a list or as a board (its columns from the server; colShown: how many cards each column shows)
  const S = { linked: false, ws: "", actions: false, sessions: [], needs: [], rate: null, jobs: new Map(), schedules: [], daemon: null, fleet: null, filter: "all", shown: PAGE, open: null, panel: null, screen: null, view: savedView(), columns: [], colShown: {} };
  function savedView() {
    try {
      return localStorage.getItem("mam-ui-jobs-view") === "board" ? "board" : "list";
    } catch {
      return "list";
    }
  }

  // ---- usage (docs/cost.md): the model's views, in a few characters ------------------------------
  const compact = (n) => (n < 1000 ? String(n) : n < 1e6 ? `${(n / 1e3).toFixed(n < 1e4 ? 1 : 0)}k` : `${(n / 1e6).toFixed(n < 1e7 ? 1 : 0)}M`);
  const dollars = (usd) => `$${usd >= 0.01 || usd === 0 ? usd.toFixed(2) : usd.toFixed(4)}`;
  const cost = (u) => (!u || !u.known || !u.tokens ? "?" : u.usd !== null ? dollars(u.usd) : `${compact(u.tokens.total)} tok`);
  const costTitle = (u) =>
    u && u.known && u.tokens
      ? `${u.tokens.total} tokens: input ${u.tokens.input}, output ${u.tokens.output}, cache write ${u.tokens.cache_write}, cache read ${u.tokens.cache_read}${u.usd === null ? ` (no price for ${(u.unpriced || []).join(", ")})` : ""}${u.why ? `; ${u.why}` : ""}`
      : (u && u.why) || "unknown";
  const costHtml = (u) => `<span class="cost mono" title="${esc(costTitle(u))}">${esc(cost(u))}</span>`;

  // ---- team ---------------------------------------------------------------------------------
  function renderTeam() {
    const ss = S.sessions;
    const r = S.rate;
    const rate = r && r.tokens_per_hour > 0 ? ` · ${r.usd_per_hour === null ? `${compact(r.tokens_per_hour)} tokens` : dollars(r.usd_per_hour)}/hour` : "";
    $("team-count").textContent = `${ss.length} session${ss.length === 1 ? "" : "s"}${rate}`;
    // what needs you now (mam status --needs-me), on top, only when something does
    const needs = S.needs.length
      ? `<div id="needs" class="needs"><b>needs you now</b><ul>${S.needs.map((n) => `<li data-need="${esc(n.kind)}"${n.session ? ` data-name="${esc(n.session)}"` : ""}>${esc(n.what)} <span class="mono dim">→ ${esc(n.act)}</span></li>`).join("")}</ul></div>`
      : "";
    if (!ss.length) return void ($("team").innerHTML = `${hereHead()}${needs}<p class="dim">no agent sessions yet — <span class="mono">mam create --agent claude --role worker</span></p>`);
    const rows = ss.map((s) => {
      const job = s.job ? `<a href="#" data-open-job="${esc(s.job.id)}" class="mono">${esc(s.job.id)}</a> <span class="pill st-${esc(s.job.status)}">${esc(s.job.status)}</span>` : `<span class="dim">-</span>`;
      const running = s.status === "running";
      const acts = [`<button type="button" data-screen="${esc(s.name)}">screen</button>`];
      if (S.actions) {
        if (running) acts.push(`<button type="button" class="danger" data-act="stop" data-name="${esc(s.name)}">stop</button>`);
        else acts.push(`<button type="button" data-act="resume" data-name="${esc(s.name)}">resume</button>`);
        if (s.status === "stopped" || s.status === "terminated") acts.push(`<button type="button" data-act="prune" data-name="${esc(s.name)}">forget</button>`);
      }
      const u = s.usage;
      const spent = u ? `${u.job ? costHtml(u.job) : `<span class="dim">-</span>`} · ${costHtml(u.today)} · ${costHtml(u.total)}` : `<span class="dim">?</span>`;
      const reason =
        s.live === "blocked" && (s.reason || s.question)
          ? `<tr class="blocked reason-row"><td colspan="10" class="reason">${waitsFor(s)}</td></tr>`
          : s.limit
            ? `<tr class="blocked reason-row"><td colspan="10" class="reason limit">${esc(limitedLine(s.limit))}</td></tr>`
            : "";
      return `<tr class="${s.tone === "blocked" ? "blocked" : ""}" data-session="${esc(s.name)}" data-live="${esc(s.live)}">
        <td><b>${esc(s.name)}</b></td><td>${esc(s.agent ?? "-")}</td><td>${esc(s.role ?? "-")}</td><td>${esc(s.status)}</td>
        <td><span class="pill live-${esc(s.tone)}" title="${esc(s.live_source ? `from the ${s.live_source}` : "")}">${esc(s.live)}</span>${s.why ? ` <span class="why dim" data-why="${esc(s.why.kind)}">${esc(s.why.text)}</span>` : ""}</td>
        <td>${job}</td><td class="spent">${spent}</td><td class="mono">${esc(s.drift.length ? s.drift.join(", ") : "-")}</td>
        <td class="mono dim">${esc(s.mux === "tmux" ? `tmux:${s.server}` : s.server)} ${esc(s.pane ?? "")}</td><td class="acts">${acts.join(" ")}</td></tr>${reason}`;
    });
    $("team").innerHTML = `${hereHead()}${needs}<table><thead><tr><th>NAME</th><th>AGENT</th><th>ROLE</th><th>STATUS</th><th>LIVE</th><th>JOB</th><th title="its part of the job · today (UTC) · in all">COST</th><th>DRIFT</th><th>PANE</th><th></th></tr></thead><tbody>${rows.join("")}</tbody></table>`;
  }

  // an agent at a usage or rate limit (docs/unattended.md): until when, its window's use, its words
  function limitedLine(l) {
    const t = l.resets_at === null ? NaN : Date.parse(l.resets_at);
    const until = Number.isNaN(t) ? "limited (reset unknown)" : `limited until ${new Date(t).toLocaleString([], { hour: "2-digit", minute: "2-digit", ...(t - Date.now() > 20 * 3600e3 ? { month: "short", day: "numeric" } : {}) })}`;
    return `${until}${l.used_percent !== undefined ? ` · ${Math.round(l.used_percent)} % used` : ""} — ${l.reason}`;
  }

  // what a blocked agent waits for; a permission dialog mam reads: its question, its choices and,
  // with actions, the one-time yes and the no (an "always" choice is never a button: the command
  // line names it with --choice)
  function waitsFor(s) {
    const q = s.question;
    if (!q) return `${esc(s.name)} waits for: ${esc(s.reason)}`;
    const has = (role) => q.choices.some((c) => c.role === role);
    const choices = q.choices.map((c) => `<li data-role="${esc(c.role)}"><span class="key mono">${esc(c.key)}</span> ${esc(c.label)}${c.role === "always" ? ` <span class="dim">(always: only mam approve --choice ${c.n})</span>` : ""}</li>`).join("");
    const notes = q.notes.length ? `<div class="dim">${q.notes.map(esc).join(" · ")}</div>` : "";
    const btns = S.actions
      ? [has("yes") ? `<button type="button" data-act="approve" data-name="${esc(s.name)}" data-fp="${esc(q.fingerprint)}">approve once</button>` : "", has("no") ? `<button type="button" class="danger" data-act="deny" data-name="${esc(s.name)}" data-fp="${esc(q.fingerprint)}">deny</button>` : ""].join(" ")
      : "";
    return `<div class="question" data-question="${esc(s.name)}" data-fingerprint="${esc(q.fingerprint)}"><div>${esc(s.name)} asks: <b>${esc(q.title)}</b>${q.title === q.question ? "" : ` — ${esc(q.question)}`}</div>
      <pre class="subject">${esc(q.subject)}</pre>${notes}<ol class="choices">${choices}</ol>
      <div class="answer">${btns} <span class="dim mono">mam approve ${esc(s.name)} --fingerprint ${esc(q.fingerprint)}</span></div></div>`;
  }

  // ---- the fleet: every host of the team (only when this machine is in one) -------------------
  // this workspace stays the table above, with its screens and actions; the other workspaces (other
  // hosts', and this host's other workspaces) are read-only rows from what their daemons announce
  const ago = (iso) => {
    const s = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000));
    return s < 120 ? `${s}s` : s < 7200 ? `${Math.round(s / 60)}m` : s < 172800 ? `${Math.round(s / 3600)}h` : `${Math.round(s / 86400)}d`;
  };
  const hostState = (w) => (w.online ? `<span class="pill host-online">online</span>` : `<span class="pill host-offline">offline</span> <span class="last-seen">last seen ${esc(ago(w.last_seen))} ago</span>`);
  function hereHead() {
    const f = S.fleet;
    if (!f) return "";
    return `<div class="host-head" data-host="${esc(f.host)}" data-here="1"><b>${esc(f.host)}</b> <span class="dim">this host · this workspace ${esc(S.ws)}</span> <span class="pill host-online">online</span></div>`;
  }
  function renderFleet() {
    const f = S.fleet;
    $("fleet-head").hidden = $("fleet").hidden = !f;
    $("team-name").textContent = f ? f.team : "";
    if (!f) return;
    const others = f.workspaces.filter((w) => !w.here);
    const hosts = [...new Set(others.map((w) => w.host))];
    const remote = hosts.filter((h) => h !== f.host).length;
    const state = f.reachable === null ? `<p class="dim" id="fleet-state" data-state="reading">reading the team's broker…</p>` : f.reachable ? "" : `<p class="fleet-down" id="fleet-state" data-state="unreachable">the team's broker does not answer: the other hosts are not shown (mam ui asks it again every few seconds)</p>`;
    const warns = f.warnings.filter((w) => !/does not answer/.test(w)).map((w) => `<p class="dim">${esc(w)}</p>`).join("");
    $("fleet-head").innerHTML = `<div class="dim">team <b>${esc(f.team)}</b> on <span class="mono">${esc(f.broker)}</span> · this host <b>${esc(f.host)}</b>${f.reachable ? ` · ${remote ? `${remote} other host${remote === 1 ? "" : "s"}` : "no other host has announced itself yet"}` : ""}</div>${state}${warns}`;
    const JOB = (j) => (!j ? `<span class="dim">-</span>` : `${S.jobs.has(j.id) ? `<a href="#" data-open-job="${esc(j.id)}" class="mono">${esc(j.id)}</a>` : `<span class="mono">${esc(j.id)}</span>`} <span class="pill st-${esc(j.status)}">${esc(j.status)}</span>`);
    const wsHtml = (w) => {
      const where = w.host === f.host ? `mam ui --workspace ${w.workspace}` : `mam ui on ${w.host}`;
      const why = `read-only here: screens, stop and resume act only on this workspace's sessions (${where} has them)`;
      const rows = w.agents.map(
        (a) => `<tr data-address="${esc(a.address)}" data-live="${esc(a.live)}" title="${esc(why)}"><td><b>${esc(a.address)}</b></td><td>${esc(a.agent ?? "-")}</td><td>${esc(a.role ?? "-")}</td>
          <td><span class="pill live-${esc(a.live)}">${esc(a.live)}</span></td><td>${JOB(a.job)}</td></tr>`,
      );
      const table = rows.length ? `<table><thead><tr><th>ADDRESS</th><th>AGENT</th><th>ROLE</th><th>LIVE</th><th>JOB</th></tr></thead><tbody>${rows.join("")}</tbody></table>` : `<p class="dim">no running agents announced</p>`;
      // a host with one workspace says its state once, in the host's line
      const st = others.filter((x) => x.host === w.host).length > 1 ? ` ${hostState(w)}` : "";
      return `<div class="fleet-ws" data-ws-id="${esc(w.ws_id)}" data-online="${w.online}"><div class="ws-head"><span class="mono">${esc(w.workspace)}</span>${st}</div>${table}<p class="dim readonly-note">${esc(why)}</p></div>`;
    };
    $("fleet").innerHTML = hosts
      .map((h) => {
        const ws = others.filter((w) => w.host === h);
        const online = ws.some((w) => w.online);
        const seen = ws.map((w) => w.last_seen).sort().pop();
        const head = `<div class="host-head"><b>${esc(h)}</b>${h === f.host ? ` <span class="dim">this host, other workspaces</span>` : ""} ${hostState({ online, last_seen: seen })}</div>`;
        return `<div class="host" data-host="${esc(h)}" data-online="${online}">${head}${ws.map(wsHtml).join("")}</div>`;
      })
      .join("");
  }
  // "last seen … ago" keeps counting between reads
  setInterval(() => S.fleet && S.fleet.workspaces.some((w) => !w.online) && renderFleet(), 5000);

  // ---- jobs ---------------------------------------------------------------------------------
  const sortedJobs = () => [...S.jobs.values()].sort((a, b) => (a.created_at === b.created_at ? b.id.localeCompare(a.id) : a.created_at < b.created_at ? 1 : -1));
  const secs = (ms) => (ms < 60000 ? `${Math.round(ms / 1000)}s` : `${Math.floor(ms / 60000)}m${String(Math.round((ms % 60000) / 1000)).padStart(2, "0")}s`);

  // lanes are rows of a fixed height; x positions are percentages, so the SVG keeps real pixel
  // sizes for dots and text at any width (the model's x is 0..1 along the job's time axis)
  function timeline(j) {
    const H = 30, top = 16, lanes = j.lanes;
    const laneName = { worker: j.to, reviewer: j.reviewer || "reviewer", mam: "mam (loop, monitor, deliveries)" };
    const y = (lane) => top + lanes.indexOf(lane) * H + H / 2;
    const x = (f) => `${(1.5 + f * 96.5).toFixed(2)}%`;
    const h = top + lanes.length * H + 14;
    const parts = [];
    for (const lane of lanes) parts.push(`<line class="lane" x1="0" x2="100%" y1="${y(lane)}" y2="${y(lane)}"/>`);
    for (const m of j.marks) parts.push(`<line class="mark" x1="${x(m.x)}" x2="${x(m.x)}" y1="${top - 4}" y2="${h - 14}" transform="translate(-9 0)"/><text class="mark-label" x="${x(m.x)}" y="${top - 5}" transform="translate(-7 0)">iteration ${m.iteration}</text>`);
    for (const e of j.events) {
      // hand-ins, verdicts and ends carry a few words of their detail above the dot
      const anchor = e.x > 0.9 ? `text-anchor="end" dx="6"` : e.x < 0.05 ? `text-anchor="start" dx="-6"` : `text-anchor="middle"`; // kept inside the axis
      const label = LABELLED.has(e.event) && e.detail ? `<text class="ev-label" ${anchor} x="${x(e.x)}" y="${y(e.lane) - 9}">${esc(e.detail.length > 18 ? `${e.detail.slice(0, 17)}…` : e.detail)}</text>` : "";
      parts.push(`<g data-seq="${e.seq}" data-event="${esc(e.event)}" data-lane="${esc(e.lane)}">${label}<circle class="ev-${esc(e.event)}" cx="${x(e.x)}" cy="${y(e.lane)}" r="6"/><title>#${e.seq} ${esc(e.event)} · ${esc(e.source)} · +${secs(e.at)}${e.detail ? `\n${esc(e.detail)}` : ""}</title></g>`);
    }
    parts.push(`<text class="axis" x="${x(0)}" y="${h - 2}">0s</text><text class="axis" text-anchor="end" x="100%" y="${h - 2}">${secs(j.span)}</text>`);
    // sizes of the labels' column are in app.css (the CSP allows no inline style): 30px rows after 16px
    const labels = lanes.map((l) => `<div class="lane-label" title="${esc(laneName[l])}">${esc(l)}</div>`).join("");
    return `<div class="tl"><div class="tl-labels">${labels}</div><svg class="timeline" width="100%" height="${h}" role="img" aria-label="timeline of job ${esc(j.id)}">${parts.join("")}</svg></div>`;
  }

  const DELIVERY = {
    offered: (h) => `on the broker for ${h}: ${h} takes it when its daemon is online`,
    received: (h) => `${h}'s daemon took it; not typed yet`,
    delivered: (h) => `typed into the agent on ${h} and seen to leave its input box`,
    uncertain: (h) => `typed on ${h}, not confirmed: the text may wait in the agent's input box (press Enter there); never typed again`,
    error: (h) => `nothing typed on ${h} (the journal says why)`,
  };
  function jobWhere(j) {
    const on = j.host ? ` <span class="job-host" data-host="${esc(j.host)}">on <b>${esc(j.host)}</b></span>` : "";
    const d = j.delivery;
    if (!d) return on;
    const h = d.host || j.host || "the other host";
    const what = d.purpose && d.purpose !== "job" ? `${d.purpose} ` : "";
    return `${on} <span class="pill dl-${esc(d.stage)}" data-delivery="${esc(d.stage)}" title="${esc(`${what || "the job "}${DELIVERY[d.stage] ? DELIVERY[d.stage](h) : d.stage} (delivery ${d.delivery})`)}">${esc(what)}${esc(d.stage)}</span>`;
  }
  function jobHtml(j) {
    const loop = j.type === "loop" ? ` · loop with <b>${esc(j.reviewer)}</b> · iteration ${j.iteration}/${j.max_iterations ?? "?"}` : "";
    return `<div class="job" data-job="${esc(j.id)}" data-status="${esc(j.status)}" data-events="${j.events.length}">
      <div class="job-head" data-open-job="${esc(j.id)}"><span class="mono">${esc(j.id)}</span>${statusPill(j)}
      <span>→ <b>${esc(j.to)}</b>${jobWhere(j)}${j.from ? ` from ${esc(j.from)}` : ""}${loop}</span><span class="dim">${esc(j.created_at)} · ${j.events.length} event${j.events.length === 1 ? "" : "s"}</span><span class="dim">cost</span> ${costHtml(j.usage)}${budgetHtml(j)}
      ${afterHtml(j)}<span class="task">${esc(j.task)}</span></div>${timeline(j)}</div>`;
  }

  // what a job runs after (job submit --after): each id opens that job (a link: keyboard reachable)
  function afterHtml(j) {
    if (!j.after || j.after.length === 0) return "";
    return `<span class="dim after" data-after="${esc(j.after.join(","))}">after ${j.after.map((id) => `<a href="#" class="mono" data-open-job="${esc(id)}">${esc(id)}</a>`).join(", ")}</span>`;
  }

  function budgetHtml(j) {
    const b = [j.budget_usd !== null ? dollars(j.budget_usd) : "", j.max_tokens !== null ? `${compact(j.max_tokens)} tokens` : ""].filter(Boolean);
    return b.length ? `<span class="dim">of ${esc(b.join(", "))}</span>` : "";
  }

  /** a job's usage in the panel: in all, per agent, per loop iteration */
  function usageHtml(j) {
    const u = j.usage;
    const parts = (o) => Object.entries(o).map(([k, v]) => `${esc(k)} ${costHtml(v)}`).join(" · ");
    const rounds = j.type === "loop" && Object.keys(u.by_iteration).length ? `<div class="dim">by iteration: ${parts(u.by_iteration)}</div>` : "";
    const agents = Object.keys(u.by_session).length > 1 ? `<div class="dim">by agent: ${parts(u.by_session)}</div>` : "";
    return `<div class="usage" data-usage="${esc(cost(u))}">cost ${costHtml(u)} <span class="dim">${esc(costTitle(u))}</span> ${budgetHtml(j)}${agents}${rounds}</div>`;
  }

  function renderFilters() {
    const count = (s) => [...S.jobs.values()].filter((j) => s === "all" || j.status === s).length;
    const delivered = [...S.jobs.values()].some((j) => j.delivery); // jobs that crossed machines: their stages too
    const waited = [...S.jobs.values()].some((j) => j.events.some((e) => e.event === "queued")); // jobs that waited their turn: theirs
    const legend = [...(waited ? ["queued", "dispatched"] : []), "started", "progress", "permission_required", "completed", "error", "cancelled", "timeout", "budget_exceeded", ...(delivered ? ["offered", "received", "delivered", "uncertain"] : [])].map((e) => `<span><svg width="10" height="10"><circle class="ev-${e}" cx="5" cy="5" r="5"/></svg> ${e.replace("_", " ")}</span>`).join("");
    $("filters").innerHTML = ["all", ...STATUSES].map((s) => `<button type="button" data-filter="${s}" class="${S.filter === s ? "on" : ""}">${s} (${count(s)})</button>`).join("") + `<span class="legend dim">${legend}</span>`;
  }

  function renderJobs() {
    $("jobs-count").textContent = `${S.jobs.size} job${S.jobs.size === 1 ? "" : "s"}`;
    const board = S.view === "board";
    for (const b of document.querySelectorAll("[data-view]")) {
      b.classList.toggle("on", b.dataset.view === S.view);
      b.setAttribute("aria-pressed", String(b.dataset.view === S.view));
    }
    $("filters").hidden = $("jobs").hidden = board;
    $("board").hidden = !board;
    if (board) {
      renderBoard();
      if (S.panel && S.panel.kind === "job") renderJobPanel();
      return;
    }
    renderFilters();
    const js = sortedJobs().filter((j) => S.filter === "all" || j.status === S.filter);
    // the newest S.shown of them; the rest a page at a time (a long list made a page thousands of pixels tall)
    const more = js.length - S.shown;
    const moreHtml = more > 0 ? `<p><button type="button" data-more-jobs="1">show ${Math.min(more, PAGE)} more</button> <span class="dim">(${more} older not shown)</span></p>` : "";
    $("jobs").innerHTML = js.length ? js.slice(0, S.shown).map(jobHtml).join("") + moreHtml : `<p class="dim">${S.jobs.size ? "no job with this status" : "no jobs yet — mam job submit --to NAME --prompt …"}</p>`;
    if (S.panel && S.panel.kind === "job") renderJobPanel();
  }

  // ---- the board (mam status --jobs): each job in the column the server put it in ----------------
  // a column lists its cards newest first (by since, as mam status --jobs does), PAGE at a time;
  // an empty column stays, narrow. Redrawn whole; the link that had the focus keeps it.
  const COLUMN_NAME = (c) => c.replace("_", " ");
  function cardHtml(j) {
    const b = j.board;
    const waits = b.column === "waiting" && b.note;
    const note = b.note ? `<div class="card-note${waits ? " waits" : ""}" title="${esc(b.note)}">${waits ? `<span class="dim">waits until </span>` : ""}<span data-note>${esc(b.note)}</span></div>` : "";
    const after = j.after && j.after.length ? `<div class="card-after">${afterHtml(j)}</div>` : "";
    return `<li class="card" data-card="${esc(j.id)}" data-status="${esc(j.status)}">
      <div class="card-head"><a href="#" class="mono" data-open-job="${esc(j.id)}" aria-label="job ${esc(j.id)}">${esc(j.id)}</a><span class="since dim" data-since="${esc(b.since)}" title="${esc(b.since)}">${esc(ago(b.since))} ago</span></div>
      <div class="card-task" title="${esc(j.task)}">${esc(j.task)}</div>
      <div class="card-who">→ <b>${esc(b.who)}</b></div>${note}${after}</li>`;
  }
  function renderBoard() {
    const focused = document.activeElement && $("board").contains(document.activeElement) ? document.activeElement : null;
    const keep = focused && focused.dataset.openJob ? { card: focused.closest("[data-card]")?.dataset.card, job: focused.dataset.openJob } : null;
    const by = new Map(S.columns.map((c) => [c, []]));
    for (const j of S.jobs.values()) if (j.board && by.has(j.board.column)) by.get(j.board.column).push(j);
    const newest = (a, b) => (a.board.since < b.board.since ? 1 : a.board.since > b.board.since ? -1 : a.id < b.id ? -1 : 1);
    $("board").innerHTML = S.columns
      .map((c) => {
        const cards = by.get(c).sort(newest);
        const shown = S.colShown[c] || PAGE;
        const more = cards.length - shown;
        const moreHtml = more > 0 ? `<button type="button" data-more-col="${esc(c)}">show ${Math.min(more, PAGE)} more</button> <span class="dim">(${more} older)</span>` : "";
        const list = cards.length ? `<ol class="cards">${cards.slice(0, shown).map(cardHtml).join("")}</ol>${moreHtml}` : "";
        return `<section class="col${cards.length ? "" : " empty"}" data-column="${esc(c)}" aria-label="${esc(COLUMN_NAME(c))}: ${cards.length}"><h3 class="col-head">${esc(COLUMN_NAME(c))} <span class="dim" data-count>${cards.length}</span></h3>${list}</section>`;
      })
      .join("");
    if (keep) {
      const sel = keep.card ? `[data-card="${CSS.escape(keep.card)}"] [data-open-job="${CSS.escape(keep.job)}"]` : `[data-open-job="${CSS.escape(keep.job)}"]`;
      const el = $("board").querySelector(sel);
      if (el) el.focus();
    }
  }
  // "3m ago" keeps counting between changes
  setInterval(() => {
    if (S.view !== "board") return;
    for (const el of document.querySelectorAll("#board [data-since]")) el.textContent = `${ago(el.dataset.since)} ago`;
  }, 5000);

  // ---- schedules (job submit --at / --every) ---------------------------------------------------
  function renderSchedules() {
    const ss = S.schedules;
    $("schedules-section").hidden = ss.length === 0;
    $("schedules-count").textContent = `${ss.length} schedule${ss.length === 1 ? "" : "s"}`;
    const every = (s) => (s === null ? "once" : s % 3600 === 0 ? `every ${s / 3600}h` : s % 60 === 0 ? `every ${s / 60}m` : `every ${s}s`);
    const rows = ss.map((s) => `<tr data-schedule="${esc(s.id)}"><td class="mono">${esc(s.id)}</td><td>→ <b>${esc(s.to)}</b></td><td>${esc(every(s.every_s))}</td><td class="mono">${s.ended ? `<span class="dim">ended: ${esc(s.ended)}</span>` : `next ${esc(s.next_at ?? "-")}`}</td><td>${s.runs} run${s.runs === 1 ? "" : "s"}${s.last_job ? ` · last <a href="#" data-open-job="${esc(s.last_job)}" class="mono">${esc(s.last_job)}</a>` : ""}</td><td>${esc(s.what.length > 80 ? `${s.what.slice(0, 79)}…` : s.what)}</td></tr>`);
    $("schedules").innerHTML = `<table class="schedules"><tr><th>ID</th><th>TO</th><th>HOW OFTEN</th><th>NEXT</th><th>RUNS</th><th>WHAT</th></tr>${rows.join("")}</table><p class="dim">cancel one: mam job cancel ID</p>`;
  }

  // ---- daemon -------------------------------------------------------------------------------
  function renderDaemon() {
    const d = S.daemon;
    if (!d) return;
    const row = (k, v) => `<div class="dim">${k}</div><div class="mono">${esc(v ?? "-")}</div>`;
    // the last job events of the workspace, newest first, whoever journalled them
    const last = [...S.jobs.values()].flatMap((j) => j.events.map((e) => ({ j: j.id, e }))).sort((a, b) => (a.e.timestamp === b.e.timestamp ? (a.j === b.j ? b.e.seq - a.e.seq : 0) : a.e.timestamp < b.e.timestamp ? 1 : -1)).slice(0, 8);
    const evs = last.map(({ j, e }) => `<tr><td class="mono" title="${esc(e.timestamp)}">${esc(e.timestamp.slice(11, 19))}</td><td><a href="#" data-open-job="${esc(j)}" class="mono">${esc(j)}</a></td><td>${esc(e.event)}</td><td>${esc(e.source)}</td><td>${esc(e.detail.length > 80 ? `${e.detail.slice(0, 79)}…` : e.detail)}</td></tr>`).join("");
    $("daemon").innerHTML = `<div class="daemon-grid" data-daemon-mode="${esc(d.mode)}">${row("mode", d.mode)}${row("pid", d.pid)}${row("broker", d.broker)}${row("since", d.since)}${row("dropped events", String(d.dropped))}${row("log", d.log)}</div>
      <h3 class="dim">last events</h3><table class="last-events">${evs || `<tr><td class="dim">none yet</td></tr>`}</table>
      <h3 class="dim">log</h3><pre class="log">${d.recent.length ? esc(d.recent.join("\n")) : "(no log lines)"}</pre>`;
  }

  // ---- the side panel: a job's journal, an agent's screen ------------------------------------
  function openPanel(kind, key) {
    closeScreen();
    S.panel = { kind, key };
    $("panel").hidden = false;
    if (kind === "job") renderJobPanel();
    else openScreen(key);
  }
  function closePanel() {
    closeScreen();
    S.panel = null;
    $("panel").hidden = true;
  }
  function renderJobPanel() {
    const j = S.jobs.get(S.panel.key);
    $("panel-title").textContent = `job ${S.panel.key}`;
    if (!j) return void ($("panel-body").innerHTML = `<p class="dim">this job is gone</p>`);
    const cancel = S.actions && ["queued", "pending", "running"].includes(j.status) ? `<p><button type="button" class="danger" data-act="cancel" data-job="${esc(j.id)}">cancel job</button></p>` : "";
    const rows = j.events.map((e) => `<tr data-seq="${e.seq}"><td class="mono" title="${esc(e.timestamp)}">${esc(e.timestamp.slice(11, 19) || e.timestamp)}</td><td>#${e.seq}</td><td><span class="pill st-${e.event === "started" || e.event === "progress" || e.event === "permission_required" ? "running" : esc(e.event)}">${esc(e.event)}</span></td><td>${esc(e.source)}<div class="dim">${esc(e.lane)} · it ${e.iteration}</div></td><td>${esc(e.detail)}${e.data ? `<div class="mono dim">${esc(e.data)}</div>` : ""}</td></tr>`);
    $("panel-body").innerHTML = `<p>${statusPill(j)} ${esc(j.type)} job → <b>${esc(j.to)}</b>${jobWhere(j)}${j.reviewer ? `, reviewer <b>${esc(j.reviewer)}</b>` : ""}${j.from ? `, from ${esc(j.from)}` : ""}</p>
      <p class="dim">${esc(j.task)}</p>${j.after && j.after.length ? `<p>${afterHtml(j)}</p>` : ""}${usageHtml(j)}${cancel}${timeline(j)}
      <table class="journal"><thead><tr><th>TIME</th><th>SEQ</th><th>EVENT</th><th>SOURCE</th><th>DETAIL</th></tr></thead><tbody>${rows.join("") || `<tr><td colspan="5" class="dim">no events yet</td></tr>`}</tbody></table>`;
  }
  function openScreen(name) {
    $("panel-title").textContent = `screen of ${name}`;
    const send = S.actions ? `<form class="send" data-send="${esc(name)}"><input name="line" placeholder="a line to type into ${esc(name)}" autocomplete="off" maxlength="4000"><button type="submit">send</button></form>` : "";
    $("panel-body").innerHTML = `${send}<div id="screen-title" class="dim"></div><pre class="screen" id="screen-text" data-screen-of="${esc(name)}">…</pre>`;
    const es = new EventSource(q(`/api/screen?name=${encodeURIComponent(name)}`));
    es.addEventListener("screen", (m) => {
      const s = JSON.parse(m.data);
      $("screen-title").textContent = s.error ? s.error : s.title;
      $("screen-text").textContent = s.text;
    });
    S.screen = es;
  }
  function closeScreen() {
    if (S.screen) S.screen.close();
    S.screen = null;
  }

  // ---- actions ------------------------------------------------------------------------------
  let toastTimer;
  function toast(msg, bad) {
    const t = $("toast");
    t.textContent = msg;
    t.className = bad ? "bad" : "";
    t.hidden = false;
    clearTimeout(toastTimer);
    toastTimer = setTimeout(() => (t.hidden = true), 5000);
  }
  async function act(body, question) {
    if (!confirm(question)) return;
    try {
      const r = await fetch(q("/api/action"), { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
      const v = await r.json().catch(() => ({ ok: false, error: `HTTP ${r.status}` }));
      toast(v.ok ? v.message : `ERROR: ${v.error}`, !v.ok);
    } catch (e) {
      toast(`ERROR: ${e.message}`, true);
    }
  }

  document.addEventListener("click", (ev) => {
    const t = ev.target.closest("[data-filter],[data-open-job],[data-screen],[data-act],[data-more-jobs],[data-more-col],[data-view],#panel-close");
    if (!t) return;
    ev.preventDefault();
    if (t.id === "panel-close") return closePanel();
    if (t.dataset.filter) {
      S.filter = t.dataset.filter;
      S.shown = PAGE;
      return renderJobs();
    }
    if (t.dataset.moreJobs) {
      S.shown += PAGE;
      return renderJobs();
    }
    if (t.dataset.moreCol) {
      S.colShown[t.dataset.moreCol] = (S.colShown[t.dataset.moreCol] || PAGE) + PAGE;
      return renderBoard();
    }
    if (t.dataset.view) {
      S.view = t.dataset.view === "board" ? "board" : "list";
      try {
        localStorage.setItem("mam-ui-jobs-view", S.view);
      } catch {}
      return renderJobs();
    }
    if (t.dataset.openJob) return openPanel("job", t.dataset.openJob);
    if (t.dataset.screen) return openPanel("screen", t.dataset.screen);
    const a = t.dataset.act;
    if (a === "stop") return act({ action: "session.stop", input: { name: t.dataset.name } }, `Stop ${t.dataset.name}? (graceful: it can be resumed)`);
    if (a === "resume") return act({ action: "session.resume", input: { name: t.dataset.name } }, `Resume ${t.dataset.name}?`);
    if (a === "prune") return act({ action: "session.prune", input: { names: [t.dataset.name] } }, `Remove ${t.dataset.name} from the registry? (its conversation and jobs stay)`);
    if (a === "cancel") return act({ action: "job.cancel", input: { job_id: t.dataset.job } }, `Cancel job ${t.dataset.job}?`);
    if (a === "approve" || a === "deny") {
      const s = S.sessions.find((x) => x.name === t.dataset.name);
      const q = s && s.question;
      const asked = q ? `\n\n${q.title}: ${q.subject}` : "";
      const deny = a === "deny";
      return act(
        { action: "session.approve", input: { target: t.dataset.name, fingerprint: t.dataset.fp, deny } },
        `${deny ? "Deny" : "Approve once"}: ${t.dataset.name}'s dialog?${asked}\n\nmam presses the agent's own key only if this dialog is still on screen.`,
      );
    }
  });
  document.addEventListener("submit", (ev) => {
    const f = ev.target.closest("form[data-send]");
    if (!f) return;
    ev.preventDefault();
    const line = f.elements.line.value;
    if (!line.trim()) return;
    act({ action: "session.send", input: { name: f.dataset.send, text: line } }, `Type this line into ${f.dataset.send}?\n\n${line}`).then(() => (f.elements.line.value = ""));
  });
  document.addEventListener("keydown", (ev) => ev.key === "Escape" && S.panel && closePanel());

  // ---- the feed -----------------------------------------------------------------------------
  function problems(list) {
    const p = $("problems");
    p.hidden = !list.length;
    p.textContent = list.join(" · ");
  }
  // a notification's dashboard link ends in #agent=NAME: that agent's row, and its screen
  function openLinked() {
    const m = /^#agent=([A-Za-z0-9][A-Za-z0-9._-]{0,63})$/.exec(location.hash);
    if (!m || !S.sessions.some((s) => s.name === m[1])) return;
    const row = document.querySelector(`tr[data-session="${CSS.escape(m[1])}"]`);
    if (row) row.scrollIntoView({ block: "center" });
    openPanel("screen", m[1]);
  }
  window.addEventListener("hashchange", openLinked);
  function connect() {
    const es = new EventSource(q("/api/events"));
    es.addEventListener("open", () => {
      $("conn").textContent = "live";
      $("conn").className = "badge on";
    });
    es.addEventListener("error", () => {
      $("conn").textContent = "disconnected (retrying)";
      $("conn").className = "badge off";
    });
    es.addEventListener("full", (m) => {
      performance.mark("mam:full-received");
      const s = JSON.parse(m.data);
      S.ws = s.workspace;
      S.actions = s.actions;
      S.sessions = s.sessions;
      S.needs = s.needs || [];
      S.rate = s.rate;
      S.jobs = new Map(s.jobs.map((j) => [j.id, j]));
      S.columns = s.board_columns || [];
      S.daemon = s.daemon;
      S.fleet = s.fleet;
      S.schedules = s.schedules || [];
      $("workspace").textContent = s.workspace;
      document.title = `mam ui — ${s.workspace.split("/").pop()}`;
      $("mode").textContent = s.actions ? "actions on" : "read-only";
      document.body.dataset.actions = s.actions ? "on" : "off";
      problems(s.problems);
      renderFleet();
      renderTeam();
      renderJobs();
      renderSchedules();
      renderDaemon();
      if (!S.linked) {
        S.linked = true;
        openLinked();
      }
      document.body.dataset.ready = "1";
      performance.mark("mam:ready");
      // the frame after the one that drew it: the first full render is on screen
      requestAnimationFrame(() => requestAnimationFrame(() => performance.mark("mam:painted")));
    });
    es.addEventListener("schedules", (m) => {
      S.schedules = JSON.parse(m.data).schedules;
      renderSchedules();
    });
    es.addEventListener("team", (m) => {
      const t = JSON.parse(m.data);
      S.sessions = t.sessions;
      S.needs = t.needs || [];
      S.rate = t.rate;
      renderTeam();
    });
    es.addEventListener("problems", (m) => problems(JSON.parse(m.data).problems));
    es.addEventListener("fleet", (m) => {
      S.fleet = JSON.parse(m.data);
      renderFleet();
    });
    es.addEventListener("jobs", (m) => {
      const d = JSON.parse(m.data);
      // a job that only gained events is redrawn alone; a new, removed or re-filtered one redraws the list
      let whole = d.removed.length > 0;
      for (const j of d.changed) {
        const before = S.jobs.get(j.id);
        S.jobs.set(j.id, j);
        const el = document.querySelector(`#jobs [data-job="${CSS.escape(j.id)}"]`);
        if (!before || !el || before.status !== j.status) whole = true;
        else el.outerHTML = jobHtml(j);
      }
      for (const id of d.removed) S.jobs.delete(id);
      renderDaemon();
      if (S.fleet) renderFleet(); // a job of another host's agent is a link once it is here
      if (whole || S.view === "board") return renderJobs(); // the board: a card may have moved without a new status
      renderFilters();
      if (S.panel && S.panel.kind === "job") renderJobPanel();
    });
    es.addEventListener("daemon", (m) => {
      S.daemon = JSON.parse(m.data);
      renderDaemon();
    });
  }
  connect();
})();
