"use strict";
// Meridian console: table, totals, drafts, feed, banners. All text goes in as text.
(function () {
  const $ = (sel) => document.querySelector(sel);
  const PER_PAGE = 100;
  const page = Math.max(1, parseInt(new URLSearchParams(location.search).get("page") || "1", 10) || 1);
  const fmt = new Intl.DateTimeFormat("en-CA", {
    timeZone: "Europe/Berlin", year: "numeric", month: "2-digit", day: "2-digit",
    hour: "2-digit", minute: "2-digit", hourCycle: "h23",
  });

  function berlin(iso) {
    const parts = {};
    for (const p of fmt.formatToParts(new Date(iso))) parts[p.type] = p.value;
    return `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}`;
  }

  function cell(tr, text, cls) {
    const td = document.createElement("td");
    td.textContent = text == null ? "" : String(text);
    if (cls) td.className = cls;
    tr.appendChild(td);
    return td;
  }

  async function getJSON(url, opts) {
    const r = await fetch(url, opts);
    let body = null;
    try { body = await r.json(); } catch (e) { body = null; }
    return { ok: r.ok, status: r.status, body };
  }

  function showError(text) {
    const el = $("#error");
    el.textContent = text;
    el.hidden = !text;
  }

  async function loadPayments() {
    const got = await getJSON(`/api/payments?per_page=${PER_PAGE}&page=${page}`);
    if (!got.ok || !got.body) return;
    const tbody = $("#payments tbody");
    const rows = [];
    for (const p of got.body.items) {
      const tr = document.createElement("tr");
      tr.dataset.id = p.id;
      cell(tr, berlin(p.created_at));
      cell(tr, p.day);
      cell(tr, p.counterparty);
      cell(tr, p.currency);
      cell(tr, p.amount, "num");
      cell(tr, p.status);
      cell(tr, p.note);
      rows.push(tr);
    }
    tbody.replaceChildren(...rows);
    const pages = Math.max(1, Math.ceil(got.body.total / PER_PAGE));
    const nav = $("#pager");
    const links = [];
    for (const n of [1, page - 1, page + 1, pages]) {
      if (n < 1 || n > pages || n === page || links.some((a) => a.dataset.n === String(n))) continue;
      const a = document.createElement("a");
      a.href = `/?page=${n}`;
      a.dataset.n = String(n);
      a.textContent = `page ${n}`;
      links.push(a);
    }
    const here = document.createElement("span");
    here.textContent = `page ${page} of ${pages}`;
    nav.replaceChildren(here, ...links);
  }

  async function loadTotals() {
    const got = await getJSON("/api/summary");
    if (!got.ok || !got.body) return;
    const rows = got.body.currencies.map((c) => {
      const tr = document.createElement("tr");
      tr.dataset.currency = c.currency;
      cell(tr, c.currency);
      cell(tr, c.count, "num");
      cell(tr, c.sum, "num");
      return tr;
    });
    $("#totals tbody").replaceChildren(...rows);
  }

  async function loadDrafts() {
    const got = await getJSON("/api/drafts");
    if (!got.ok || !got.body) return;
    const rows = got.body.items.map((d) => {
      const tr = document.createElement("tr");
      tr.dataset.id = d.id;
      cell(tr, d.counterparty);
      cell(tr, d.currency);
      cell(tr, d.amount, "num");
      cell(tr, d.state);
      cell(tr, d.maker);
      const td = cell(tr, "");
      if (d.state === "pending") {
        const b = document.createElement("button");
        b.className = "approve";
        b.type = "button";
        b.dataset.draft = d.id;
        b.textContent = "Approve";
        td.appendChild(b);
      }
      return tr;
    });
    $("#drafts tbody").replaceChildren(...rows);
  }

  async function approve(id) {
    const token = $("#token").value.trim();
    let got;
    try {
      got = await getJSON(`/api/drafts/${encodeURIComponent(id)}/approve`, {
        method: "POST", headers: { Authorization: `Bearer ${token}` },
      });
    } catch (e) {
      got = { ok: false, status: 0, body: null };
    }
    if (!got.ok) {
      const why = got.body && got.body.error ? got.body.error : "no answer";
      showError(`Approval of ${id} failed (${got.status || "network"}): ${why}`);
    } else {
      showError("");
    }
    await loadDrafts();
  }

  async function loadStatus() {
    let got;
    try { got = await getJSON("/api/status"); } catch (e) { return; }
    if (!got.ok || !got.body) return;
    const s = got.body;
    $("#vendor-down").hidden = s.vendor !== "down";
    $("#sync-state").textContent = `sync ${s.sync}: ${s.pages_done} pages, ${s.payments} payments`;
  }

  async function loadFeed() {
    let got;
    try { got = await getJSON("/api/feed"); } catch (e) { got = { ok: false }; }
    const err = $("#feed-error");
    if (!got.ok || !got.body) {
      err.textContent = "Notifications unavailable: the notifier does not answer.";
      err.hidden = false;
      return;
    }
    err.hidden = true;
    const items = got.body.items.map((n) => {
      const li = document.createElement("li");
      li.dataset.seq = String(n.seq);
      li.textContent = n.text;
      return li;
    });
    $("#feed").replaceChildren(...items);
  }

  document.addEventListener("click", (e) => {
    const b = e.target.closest("button.approve");
    if (b) approve(b.dataset.draft);
  });
  $("#sync").addEventListener("click", async () => {
    const got = await getJSON("/api/sync", { method: "POST" });
    if (!got.ok && got.status !== 409) showError(`Sync failed to start (${got.status})`);
    loadStatus();
  });

  const safe = (fn) => () => fn().catch(() => {});
  safe(loadPayments)();
  safe(loadTotals)();
  safe(loadDrafts)();
  safe(loadStatus)();
  safe(loadFeed)();
  setInterval(safe(loadStatus), 1500);
  setInterval(safe(loadFeed), 1000);
  setInterval(safe(loadDrafts), 3000);
  setInterval(safe(loadTotals), 5000);
})();
