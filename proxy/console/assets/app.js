// payguard approvals console. Every string from the server is put in the page with textContent (never
// innerHTML), so a seller's URL, description, payTo or reason is shown as text and never runs.
"use strict";

const POLL_MS = 2000;
let csrf = "";
let timer = null;
const drafts = new Map(); // hold id -> {by, note} typed but not sent, kept across refreshes

function $(id) { return document.getElementById(id); }

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else e.setAttribute(k, v);
  }
  for (const c of children) {
    if (c == null) continue;
    e.append(typeof c === "string" ? document.createTextNode(c) : c);
  }
  return e;
}

async function api(method, path, body) {
  const opts = { method, credentials: "same-origin", headers: {} };
  if (body !== undefined) {
    opts.headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body);
  }
  if (method !== "GET" && csrf) opts.headers["X-CSRF-Token"] = csrf;
  const r = await fetch(path, opts);
  let data = null;
  try { data = await r.json(); } catch (_) { /* not JSON */ }
  return { status: r.status, data };
}

function showSignIn(msg) {
  if (timer) { clearInterval(timer); timer = null; }
  csrf = "";
  $("app").hidden = true;
  $("signout").hidden = true;
  $("signin").hidden = false;
  $("signin-error").textContent = msg || "";
  $("live").textContent = "";
}

function showApp() {
  $("signin").hidden = true;
  $("app").hidden = false;
  $("signout").hidden = false;
  refresh();
  if (!timer) timer = setInterval(refresh, POLL_MS);
}

function targetHold() {
  const m = /^#hold=([A-Za-z0-9_\-]+)$/.exec(location.hash);
  return m ? m[1] : "";
}

function fmtTime(s) {
  if (!s) return "";
  const d = new Date(s);
  return isNaN(d) ? s : d.toLocaleString();
}

// money shows a USD decimal with at least two decimals ("0.5" -> "$0.50"), keeping any finer digits.
function money(s) {
  if (s === undefined || s === null || s === "") return "";
  const [i, f = ""] = String(s).split(".");
  return "$" + i + "." + f.padEnd(2, "0");
}

function row(dl, name, value) {
  if (value === undefined || value === null || value === "") return;
  dl.append(el("dt", { text: name }), el("dd", {}, value instanceof Node ? value : String(value)));
}

// pathText shows a URL or path as text that wraps at its separators ("/", "?", "&", "=", ";", "#", "-"): a
// <wbr> after each, and CSS (.path) breaks inside a segment only when the segment alone is wider than the
// line. The text itself is unchanged (textContent is the same string).
function pathText(s) {
  const span = el("span", { class: "path" });
  let part = "";
  for (const ch of String(s || "")) {
    part += ch;
    if ("/?&=;#-".includes(ch)) {
      span.append(document.createTextNode(part), document.createElement("wbr"));
      part = "";
    }
  }
  if (part) span.append(document.createTextNode(part));
  return span;
}

// named shows a network's or asset's known name with the raw value beside it: "Base (eip155:8453)".
function named(name, raw) {
  if (!raw) return "";
  return name ? name + " (" + raw + ")" : raw;
}

// holdStatusText is what a hold's status says to a person: a used hold was approved (and then paid).
function holdStatusText(status) {
  return status === "used" ? "approved · used" : status;
}

function screeningRows(dl, s) {
  if (!s) return;
  row(dl, "merchant domain", s.merchant_domain);
  const sc = s.sanctions || {};
  row(dl, "sanctions", (sc.status || "unknown") + (sc.note ? " (" + sc.note + ")" : ""));
  for (const m of sc.matches || []) {
    row(dl, "sanctions match", (m.name || "") + (m.matched_name && m.matched_name !== m.name ? " (as " + m.matched_name + ")" : "") +
      (m.address ? " " + m.address : "") + " score " + m.score + (m.programs && m.programs.length ? " [" + m.programs.join(", ") + "]" : "") +
      (m.steps && m.steps.length ? " — needed: " + m.steps.join(", ").replaceAll("_", " ") : ""));
  }
  const d = s.domain || {};
  if (d.checked) {
    row(dl, "domain age", d.age_days === null || d.age_days === undefined ? "unknown" : d.age_days + " days");
    if (d.registered_at) row(dl, "registered", fmtTime(d.registered_at));
  }
}

function holdCard(h, pending) {
  const card = el("article", { class: "card", id: "hold-" + h.id, "data-hold": h.id, "data-status": h.status });
  if (h.id === targetHold()) card.classList.add("target");
  card.append(el("h3", {}, money(h.amount_usd) + " ", el("span", { class: "status " + h.status, text: holdStatusText(h.status) })));
  card.append(el("div", { class: "url" }, h.method + " ", pathText(h.url)));
  if (h.description) card.append(el("p", { class: "description", text: h.description }));
  if (h.reasons && h.reasons.length) {
    const ul = el("ul", { class: "reasons" });
    for (const r of h.reasons) ul.append(el("li", { text: r }));
    card.append(ul);
  }
  const dl = el("dl");
  row(dl, "hold", h.id);
  if (h.agent) row(dl, "agent", h.agent);
  row(dl, "host", h.host);
  row(dl, "pay to", h.pay_to);
  row(dl, "network", named(h.network_name, h.network));
  row(dl, "asset", named(h.asset_name, h.asset));
  row(dl, "amount (atomic)", h.amount_atomic ? h.amount_atomic + (h.asset_name ? " " + h.asset_name : "") : "");
  screeningRows(dl, h.screening);
  row(dl, "created", fmtTime(h.created_at));
  row(dl, "expires", fmtTime(h.expires_at));
  row(dl, "resolved by", h.resolved_by);
  row(dl, "note", h.note);
  row(dl, "resolved", fmtTime(h.resolved_at));
  row(dl, "receipt", h.receipt_id);
  card.append(dl);
  if (pending) card.append(decideForm(h));
  return card;
}

function decideForm(h) {
  const d = drafts.get(h.id) || { by: localStorage.getItem("payguard.by") || "", note: "" };
  const f = el("form", { class: "decide" });
  const by = el("input", { "aria-label": "your name", placeholder: "your name", maxlength: "256", required: "" });
  by.value = d.by;
  const note = el("input", { "aria-label": "note", placeholder: "note (optional)", maxlength: "2048" });
  note.value = d.note;
  const keep = () => drafts.set(h.id, { by: by.value, note: note.value });
  by.addEventListener("input", keep);
  note.addEventListener("input", keep);
  const msg = el("p", { class: "error wide", role: "alert" });
  const approve = el("button", { type: "button", class: "approve", text: "Approve" });
  const deny = el("button", { type: "button", class: "deny", text: "Deny" });
  const act = async (action) => {
    if (!by.value.trim()) { msg.textContent = "Enter your name first."; by.focus(); return; }
    localStorage.setItem("payguard.by", by.value.trim());
    approve.disabled = deny.disabled = true;
    const r = await api("POST", "/console/api/holds/" + encodeURIComponent(h.id) + "/" + action, { by: by.value.trim(), note: note.value });
    approve.disabled = deny.disabled = false;
    if (r.status === 401) return showSignIn("Your session expired; sign in again.");
    if (r.status !== 200) { msg.textContent = (r.data && r.data.message) || "failed (" + r.status + ")"; return; }
    drafts.delete(h.id);
    refresh();
  };
  approve.addEventListener("click", () => act("approve"));
  deny.addEventListener("click", () => act("deny"));
  f.addEventListener("submit", (e) => { e.preventDefault(); });
  f.append(el("div", {}, el("label", { text: "Your name" }), by), el("div", {}, el("label", { text: "Note" }), note),
    approve, deny, msg);
  return f;
}

function renderBudget(b) {
  const box = $("budget");
  box.replaceChildren();
  if (!b) { box.append(el("p", { class: "muted", text: "unavailable" })); return; }
  for (const [k, v] of [["spent", b.spent_usd], ["reserved", b.reserved_usd], ["daily cap", b.cap_usd]]) {
    box.append(el("div", {}, el("span", { class: "muted", text: k }), el("b", { text: money(v) })));
  }
}

// settledText says what a settlement row authorized and settled (atomic units of the option's asset).
function settledText(d) {
  if (d.stage !== "settlement") return "";
  return "authorized " + (d.authorized || "?") + ", settled " + (d.settled || "unknown (the authorized amount counts)") +
    (d.reasons && d.reasons.length ? "; " : "");
}

// LAST_DECISIONS is how many decisions the table lists: all the proxy keeps (docs/approvals.md).
const LAST_DECISIONS = 50;

// renderDecisions lists the last decisions, newest first. A hold's row says what became of the hold
// (approved, denied, expired) once a person or the clock decided it, not "hold" forever.
function renderDecisions(ds, holds) {
  const tb = $("decisions").tBodies[0];
  tb.replaceChildren();
  const status = new Map((holds || []).map((h) => [h.id, h.status]));
  for (const d of ds.slice(0, LAST_DECISIONS)) {
    const outcome = d.decision === "hold" && d.hold_id ? status.get(d.hold_id) : "";
    const shown = outcome && outcome !== "pending" ? outcome : d.decision;
    tb.append(el("tr", { "data-decision": d.decision, "data-hold": d.hold_id || "", "data-outcome": shown },
      el("td", { class: "nowrap", text: new Date(d.at).toLocaleTimeString() }),
      el("td", {}, el("span", { class: "status " + shown, text: shown === d.decision ? d.decision : "hold · " + holdStatusText(shown) }),
        el("span", { class: "class", text: d.stage + (d.class ? " · " + d.class : "") + (d.agent ? " · agent " + d.agent : "") })),
      el("td", {}, d.method + " ", pathText(d.host + d.path)),
      el("td", { class: "nowrap", text: money(d.amount_usd) }, el("span", { class: "class", text: d.scheme || "" })),
      el("td", { text: d.pay_to || "" }),
      el("td", { text: settledText(d) + (d.reasons || []).join("; ") })));
  }
}

// Pending cards are rebuilt only when the set of pending holds changes, so a person typing a note is not
// interrupted by the refresh.
let pendingKey = "";

async function refresh() {
  const r = await api("GET", "/console/api/state").catch(() => null);
  if (!r) { $("live").textContent = "offline; retrying"; return; }
  if (r.status === 401) return showSignIn("Your session expired; sign in again.");
  if (r.status !== 200) { $("live").textContent = "error " + r.status; return; }
  const s = r.data;
  $("live").textContent = "live · " + new Date().toLocaleTimeString();
  $("error").textContent = s.error || "";
  renderBudget(s.budget);
  const pending = s.holds.filter((h) => h.status === "pending");
  const done = s.holds.filter((h) => h.status !== "pending");
  const key = pending.map((h) => h.id).join(",");
  if (key !== pendingKey) {
    pendingKey = key;
    const box = $("pending");
    box.replaceChildren(...pending.map((h) => holdCard(h, true)));
    const t = targetHold() && document.getElementById("hold-" + targetHold());
    if (t) t.scrollIntoView({ block: "center" });
  }
  $("pending-count").textContent = pending.length ? String(pending.length) : "";
  $("pending-empty").hidden = pending.length > 0;
  $("history").replaceChildren(...done.map((h) => holdCard(h, false)));
  renderDecisions(s.decisions, s.holds);
}

async function start() {
  $("signin-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const tok = $("token").value;
    const r = await api("POST", "/console/session", { token: tok });
    $("token").value = "";
    if (r.status !== 200) { $("signin-error").textContent = (r.data && r.data.message) || "sign-in failed"; return; }
    csrf = r.data.csrf;
    showApp();
  });
  $("signout").addEventListener("click", async () => {
    await api("POST", "/console/signout", {});
    showSignIn("Signed out.");
  });
  window.addEventListener("hashchange", () => { pendingKey = ""; refresh(); });
  const r = await api("GET", "/console/session").catch(() => null);
  if (r && r.status === 200) { csrf = r.data.csrf; showApp(); } else { showSignIn(""); }
}

document.addEventListener("DOMContentLoaded", start);
