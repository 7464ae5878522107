// The web view's one script: the session list, and a session page kept live
// by server-sent events. No framework; every text a model or a client wrote
// goes in as textContent, and the only HTML set is what the server rendered
// safely (report's consensus map, goldmark's markdown with raw HTML off).
"use strict";

const csrf = document.querySelector('meta[name="csrf-token"]').content;
const $ = (id) => document.getElementById(id);

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else e.setAttribute(k, v);
  }
  for (const k of kids) if (k != null) e.append(k);
  return e;
}

async function post(url) {
  const r = await fetch(url, { method: "POST", headers: { "X-CSRF-Token": csrf }, credentials: "same-origin" });
  const text = await r.text();
  if (!r.ok) throw new Error(text.trim() || r.statusText);
  return JSON.parse(text);
}

$("logout").addEventListener("click", async () => {
  try { await post("/ui/logout"); } catch (_) { /* logged out either way */ }
  location.href = "/ui/login";
});

// ---- the list ----

async function loadList() {
  $("list").hidden = false;
  const params = new URLSearchParams(location.search);
  $("status").value = params.get("status") || "";
  $("q").value = params.get("q") || "";
  const r = await fetch("/ui/api/sessions?" + params.toString(), { credentials: "same-origin" });
  if (!r.ok) { $("list-total").textContent = await r.text(); return; }
  const page = await r.json();
  // The API answers a page of the list at a time: say which part of the
  // total this is, and offer the pages before and after it.
  // The span is of the store's list, sessions that could not be read
  // included (the total counts them too), so it reads the same on every
  // page; the sessions not read are said, as the rows are fewer.
  const offset = Math.max(Number(params.get("offset")) || 0, 0);
  const end = page.next_offset || page.total;
  const of = page.total === 1 ? "1 session" : `${page.total} sessions`;
  const unread = page.unreadable ? ` (${page.unreadable} could not be read)` : "";
  $("list-total").textContent = (end > offset && (offset > 0 || end < page.total) ? `${offset + 1}–${end} of ${of}` : of) + unread;
  $("list-prev").hidden = offset === 0;
  $("list-next").hidden = !page.next_offset;
  listPages.prev = Math.max(offset - page.limit, 0);
  listPages.next = page.next_offset || 0;
  const body = $("sessions").tBodies[0];
  body.replaceChildren(...page.sessions.map((s) => el("tr", { "data-session": s.id },
    el("td", {}, el("a", { href: "/ui/s/" + encodeURIComponent(s.id), text: s.id })),
    el("td", {}, el("span", { class: "badge st-" + s.status, text: s.status })),
    el("td", { class: "task", text: s.task }),
    el("td", { text: String(s.agents) }),
    el("td", { text: String(s.steps) }),
    el("td", { text: s.winner || "" }),
    el("td", { text: s.cost }),
    el("td", { text: s.created }))));
}

const listPages = { prev: 0, next: 0 };

// showListPage moves the list to another page, keeping its filter.
function showListPage(offset) {
  const p = new URLSearchParams(location.search);
  if (offset > 0) p.set("offset", String(offset));
  else p.delete("offset");
  history.replaceState(null, "", "/ui/" + (p.toString() ? "?" + p : ""));
  loadList();
}
$("list-prev").addEventListener("click", () => showListPage(listPages.prev));
$("list-next").addEventListener("click", () => showListPage(listPages.next));

$("filter").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const p = new URLSearchParams();
  if ($("status").value) p.set("status", $("status").value);
  if ($("q").value) p.set("q", $("q").value);
  history.replaceState(null, "", "/ui/" + (p.toString() ? "?" + p : ""));
  loadList();
});

// ---- a session ----

const shown = { answers: 0, open: new Set(), asks: null };
// What tests read: how many states arrived, what each showed, how long each
// render took.
window.__massgen = { renders: 0, renderMs: [], seen: [], state: null };

function render(st) {
  const t0 = performance.now();
  $("s-id").textContent = st.id;
  const badge = $("s-status");
  badge.textContent = st.status;
  badge.className = "badge st-" + st.status;
  $("s-task").textContent = st.task;
  const team = [st.team ? "Team " + st.team : "", st.turn ? `turn ${st.turn}, continuing ${st.previous}` : ""].filter(Boolean).join(" · ");
  $("s-team").textContent = team;
  $("s-team").hidden = !team;
  $("s-outcome").textContent = st.outcome || (st.running || st.running_elsewhere ? "The team is working." : "");
  $("s-cost").textContent = st.cost;
  $("s-steps").textContent = String(st.steps);
  $("s-live").textContent = st.running ? "running here" : st.running_elsewhere ? "running on another replica" : "";
  // Both start disabled (index.html) until a state says which applies.
  $("cancel").disabled = !st.can_cancel;
  $("resume").disabled = !st.can_resume;
  supersedeAction(st.status);

  renderApprovals(st);
  const perms = st.permissions;
  $("perms-box").hidden = !perms;
  if (perms) {
    $("perms-summary").textContent = perms.summary + " (permissions.jsonl)";
    $("perms").replaceChildren(...perms.decisions.map((d) => el("li", { class: "perm-" + d.outcome },
      `${d.at} ${d.agent} ${d.outcome}: ${d.action} (${d.rule}${d.by ? "; " + d.by : ""})`)));
  }
  const waiting = new Set((st.approvals || []).map((a) => a.agent));

  $("cards").replaceChildren(...st.agents.map((a) => el("article", { class: "card st-" + a.status + (a.winner ? " winner" : ""), "data-agent": a.id, tabindex: "0" },
    el("h3", { text: (a.winner ? "★ " : "") + a.id }),
    el("p", { class: "model", text: a.model }),
    el("dl", {},
      el("dt", { text: "status" }), el("dd", { class: "status", text: a.status }),
      el("dt", { text: "steps" }), el("dd", { text: String(a.steps) }),
      el("dt", { text: "answers" }), el("dd", { text: String(a.answers) + (a.latest ? ` (latest ${a.latest})` : "") }),
      el("dt", { text: "vote" }), el("dd", { text: a.vote || "—" }),
      el("dt", { text: "cost" }), el("dd", { class: "cost", text: a.cost })),
    waiting.has(a.id) ? el("p", { class: "waiting", text: "waiting for your approval" }) : null,
    a.last_error ? el("p", { class: "error", text: a.last_error }) : null)));

  // The consensus map is report.ConsensusMapSVG: escaped, no script.
  $("map").innerHTML = st.map_svg;
  $("swimlane").textContent = st.swimlane;
  $("summary").textContent = st.summary;
  if (st.final_html) $("final").innerHTML = st.final_html;
  else $("final").textContent = noFinalAnswer(st);

  if (st.files.length === 0) {
    $("files").textContent = st.winner ? "The winner delivered no files." : live(st) ? "No winner yet." : "No winner: the run ended without one.";
  } else {
    const base = `/ui/api/sessions/${encodeURIComponent(st.id)}`;
    $("files").replaceChildren(
      el("p", {}, el("a", { href: base + "/files.zip", download: "", text: `Download all ${st.files.length} as a zip` })),
      el("ul", {}, ...st.files.map((f) => el("li", {},
        el("a", { href: `${base}/files/${encodeURIComponent(st.winner)}/${f.path.split("/").map(encodeURIComponent).join("/")}`, target: "_blank", rel: "noopener", text: f.path }),
        ` (${f.bytes} bytes)`))));
  }

  // Answers never change once landed: only new ones are added.
  if (st.answers.length !== shown.answers) {
    const frag = document.createDocumentFragment();
    for (const a of st.answers.slice(shown.answers)) frag.append(answerView(a));
    $("answers").append(frag);
    shown.answers = st.answers.length;
  }
  window.__massgen.state = st;
  window.__massgen.seen.push({ status: st.status, answers: st.answers.length });
  window.__massgen.renders++;
  window.__massgen.renderMs.push(performance.now() - t0);
}

// live says the run may still bring a final answer: it works, or its
// winner is chosen and the answer being written.
function live(st) { return st.status === "running" || st.status === "decided"; }

// noFinalAnswer says why a session shows no final answer: one is coming,
// or the run ended without one, and how.
function noFinalAnswer(st) {
  if (live(st)) return "No final answer yet.";
  const again = st.can_resume ? "; Resume goes on with it" : "";
  switch (st.status) {
    case "cancelled": return `No final answer: the run was cancelled${again}.`;
    case "interrupted": return `No final answer: the run was interrupted${again}.`;
    case "failed": return `No final answer: the run ended with ${st.stop_reason || "a failure"}${again}.`;
  }
  const why = st.stop_reason ? ` (${st.stop_reason})` : "";
  // A finished run without one (a timeout nobody answered in) reads as
  // finishing, not as "ended finished".
  if (st.status === "finished") return `No final answer: the run finished without one${why}.`;
  return `No final answer: the run ended ${st.status}${why}.`;
}

// action is what Cancel or Resume last said beside the buttons: the status
// the page showed when pressed (from) and the one the action leads to (to;
// from again for a refusal). The words stand while states show either, and
// go once a state shows another, or from again after to: the run has moved
// on past them (a resumed run that ended, a cancelled one resumed).
const action = { from: null, to: null, reached: false };

function sayAction(text, from, to) {
  $("action-msg").textContent = text;
  Object.assign(action, { from, to, reached: false });
}

function supersedeAction(status) {
  if (action.to === null) return;
  if (status === action.to) action.reached = true;
  else if (action.reached || status !== action.from) sayAction("", null, null);
}

// renderApprovals lists the asks waiting for a person, each with allow and
// deny; rebuilt only when the set changes, so a focused button keeps its
// focus while other states arrive.
function renderApprovals(st) {
  const asks = st.approvals || [];
  const key = asks.map((a) => a.id).join(",");
  if (key === shown.asks) return;
  shown.asks = key;
  $("approvals-box").hidden = asks.length === 0;
  const base = `/ui/api/sessions/${encodeURIComponent(st.id)}/approvals/`;
  $("approvals").replaceChildren(...asks.map((a) => {
    const msg = el("span", { class: "ask-msg", role: "status" });
    const answer = (what) => async () => {
      for (const b of li.querySelectorAll("button")) b.disabled = true;
      try {
        const out = await post(base + encodeURIComponent(a.id) + "/" + what);
        msg.textContent = out.answer === "approved" ? "Approved." : "Refused.";
      } catch (e) {
        msg.textContent = e.message;
        for (const b of li.querySelectorAll("button")) b.disabled = false;
      }
    };
    const allow = el("button", { type: "button", class: "allow", text: "Allow" });
    const deny = el("button", { type: "button", class: "deny", text: "Deny" });
    allow.addEventListener("click", answer("approve"));
    deny.addEventListener("click", answer("deny"));
    const li = el("li", { class: "ask", "data-request": a.id },
      el("p", {}, el("strong", { text: a.agent }), ` asks to ${a.action} (${a.tool}; risk ${a.risk}; ${a.rule}; refused at ${a.expires} if nobody answers)`),
      a.command ? el("p", {}, "In the whole command, all of which Allow runs: ", el("code", { class: "ask-cmd", text: a.command })) : null,
      el("div", { class: "actions" }, allow, deny, msg));
    return li;
  }));
}

function answerView(a) {
  const d = el("details", { class: "answer", "data-label": a.label },
    el("summary", {}, el("strong", { text: a.label }), ` by ${a.agent}, step ${a.step}, ${a.at}`));
  // The body is built when first opened: a 200-step session's answers cost
  // nothing until read.
  const body = el("div", { class: "md" });
  d.append(body);
  d.addEventListener("toggle", () => {
    if (d.open && !body.hasChildNodes()) body.innerHTML = a.html; // goldmark, raw HTML omitted
  });
  if (a.diff && a.diff.length) {
    const pre = el("pre", { class: "diff", tabindex: "0", "aria-label": `changes since ${a.agent}'s previous answer` });
    const box = el("details", { class: "diffbox" }, el("summary", { text: "Changes since the previous answer" }), pre);
    box.addEventListener("toggle", () => {
      if (!box.open || pre.hasChildNodes()) return;
      for (const l of a.diff) pre.append(el("span", { class: l.op === "+" ? "add" : l.op === "-" ? "del" : "same", text: `${l.op === "=" ? " " : l.op} ${l.text}\n` }));
    });
    d.append(box);
  }
  return d;
}

function showMissing(msg) {
  $("session").hidden = true;
  $("missing").hidden = false;
  $("missing-msg").textContent = msg;
}

// follow keeps the page's event stream open. A stream that dropped is
// reopened by the browser itself; one the server refused is closed for
// good by EventSource, which does not say why, so the session's state is
// asked once: a 401 is a login that ended (a restart of a server that
// keeps logins in memory ends them all), which no wait mends; a 429 (the
// tenant's calls or open views are spent) is retried after a wait that
// doubles up to a minute, and the page says why it is not live meanwhile.
function follow(url, wait) {
  const es = new EventSource(url);
  es.addEventListener("state", (ev) => { wait = 10; render(JSON.parse(ev.data)); });
  es.onerror = async () => {
    if (es.readyState !== EventSource.CLOSED) { $("s-live").textContent = "reconnecting…"; return; }
    const r = await fetch(url.replace(/\/events$/, ""), { credentials: "same-origin" }).catch(() => null);
    if (r && r.status === 401) {
      $("s-live").replaceChildren("live updates stopped: this browser's login has ended (the server restarted, or the login expired); ",
        el("a", { href: "/ui/login", text: "log in again" }), " to see the session as it is now");
      return;
    }
    if (r && r.ok) render(await r.json());
    const why = !r ? "the server did not answer" : r.ok || r.status === 429 ? "the server refused them: too many open pages or requests for this login" : `the server answered ${r.status}`;
    $("s-live").textContent = `live updates paused (${why}); retrying in ${wait} s`;
    setTimeout(() => follow(url, Math.min(wait * 2, 60)), wait * 1000);
  };
}

async function loadSession(id) {
  const base = "/ui/api/sessions/" + encodeURIComponent(id);
  const r = await fetch(base, { credentials: "same-origin" });
  if (!r.ok) { showMissing((await r.text()).trim()); return; }
  $("session").hidden = false;
  render(await r.json());
  follow(base + "/events", 10);
  for (const [btn, what] of [["cancel", "cancel"], ["resume", "resume"]]) {
    $(btn).addEventListener("click", async () => {
      const from = window.__massgen.state?.status ?? null;
      sayAction("", null, null);
      try {
        const out = await post(`${base}/${what}`);
        sayAction(what === "cancel" ? "Cancelled." : "Resumed.", from, what === "cancel" ? "cancelled" : "running");
        if (out.outcome) $("s-outcome").textContent = out.outcome;
      } catch (e) {
        sayAction(e.message, from, from);
      }
    });
  }
}

const m = location.pathname.match(/^\/ui\/s\/([^/]+)$/);
if (m) loadSession(decodeURIComponent(m[1]));
else loadList();
