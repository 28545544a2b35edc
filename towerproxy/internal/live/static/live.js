// The live page: it receives the proxy's frames as server-sent events
// from "events" (first the history, then one frame a second), keeps the
// last five minutes of them, and draws, for each upstream, its numbers
// now, three charts over the minutes kept, and its backends' states.
"use strict";

const KEEP_MS = 5 * 60 * 1000;
let frames = [];

const css = getComputedStyle(document.documentElement);
const color = (name) => css.getPropertyValue("--" + name).trim();

function fmt(v, digits) {
  if (v === undefined || v === null || Number.isNaN(v)) return "–";
  if (digits === 0 || Number.isInteger(v)) return Math.round(v).toLocaleString("en-US");
  return v.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

function setText(root, selector, text) {
  const el = root.querySelector(selector);
  if (el && el.textContent !== text) el.textContent = text;
}

// upstreamSection returns the section of the upstream named, made from
// the template the first time.
function upstreamSection(name) {
  const main = document.getElementById("upstreams");
  let sec = main.querySelector(`section[data-upstream="${CSS.escape(name)}"]`);
  if (!sec) {
    sec = document.getElementById("upstream-template").content.firstElementChild.cloneNode(true);
    sec.dataset.upstream = name;
    sec.querySelector(".name").textContent = name;
    main.appendChild(sec);
  }
  return sec;
}

function renderBackends(sec, backends) {
  const body = sec.querySelector("tbody");
  const seen = new Set();
  for (const b of backends) {
    seen.add(b.addr);
    let row = body.querySelector(`tr[data-backend="${CSS.escape(b.addr)}"]`);
    if (!row) {
      row = document.createElement("tr");
      row.dataset.backend = b.addr;
      row.innerHTML = '<td class="addr"></td><td><span class="state"></span></td><td class="requests"></td><td class="errors"></td><td class="inflight"></td><td class="p99"></td>';
      row.querySelector(".addr").textContent = b.addr;
      body.appendChild(row);
    }
    const st = row.querySelector(".state");
    if (st.dataset.state !== b.state) {
      st.dataset.state = b.state;
      st.textContent = b.state;
    }
    setText(row, ".requests", fmt(b.requests, 1));
    setText(row, ".errors", fmt(b.errors, 1));
    setText(row, ".inflight", fmt(b.inflight, 0));
    setText(row, ".p99", fmt(b.p99, 1));
  }
  for (const row of [...body.children]) {
    if (!seen.has(row.dataset.backend)) row.remove();
  }
}

// span returns the time the charts cover, to now: the frames kept, from
// 30 seconds up to KEEP_MS.
function span(now) {
  const first = frames.length ? frames[0].t : now;
  return Math.min(KEEP_MS, Math.max(30 * 1000, now - first));
}

// spanText names a time span before now: "-45 s", "-5 min".
function spanText(ms) {
  const s = Math.round(ms / 1000);
  return s < 120 ? `-${s} s` : `-${Math.round(s / 60)} min`;
}

// draw plots the series on canvas over the span to now: each series is
// [name of its colour, function of a frame's upstream].
function draw(canvas, name, series, now) {
  const dpr = window.devicePixelRatio || 1;
  const w = canvas.clientWidth, h = canvas.clientHeight;
  if (canvas.width !== Math.round(w * dpr) || canvas.height !== Math.round(h * dpr)) {
    canvas.width = Math.round(w * dpr);
    canvas.height = Math.round(h * dpr);
  }
  const ctx = canvas.getContext("2d");
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, w, h);
  const pad = { l: 44, r: 8, t: 8, b: 18 };
  const points = [];
  let top = 0;
  for (const f of frames) {
    const u = f.upstreams.find((x) => x.name === name);
    if (!u) continue;
    const vals = series.map(([, get]) => get(u));
    for (const v of vals) top = Math.max(top, v);
    points.push([f.t, vals]);
  }
  top = niceTop(top);
  const width = span(now);
  const x = (t) => pad.l + (w - pad.l - pad.r) * (1 - (now - t) / width);
  const y = (v) => pad.t + (h - pad.t - pad.b) * (1 - v / top);
  ctx.font = "11px system-ui, sans-serif";
  ctx.fillStyle = color("muted");
  ctx.strokeStyle = color("line");
  ctx.lineWidth = 1;
  for (let i = 0; i <= 2; i++) {
    const v = (top * i) / 2, yy = Math.round(y(v)) + 0.5;
    ctx.beginPath();
    ctx.moveTo(pad.l, yy);
    ctx.lineTo(w - pad.r, yy);
    ctx.stroke();
    ctx.textAlign = "right";
    ctx.fillText(fmt(v, v < 10 && v !== 0 ? 1 : 0), pad.l - 6, yy + 4);
  }
  ctx.textAlign = "left";
  ctx.fillText(spanText(width), pad.l, h - 4);
  ctx.textAlign = "right";
  ctx.fillText("now", w - pad.r, h - 4);
  series.forEach(([key], i) => {
    ctx.strokeStyle = color(key);
    ctx.lineWidth = 1.75;
    ctx.beginPath();
    let started = false;
    for (const [t, vals] of points) {
      if (now - t > width) continue;
      if (!started) ctx.moveTo(x(t), y(vals[i]));
      else ctx.lineTo(x(t), y(vals[i]));
      started = true;
    }
    ctx.stroke();
  });
}

// niceTop rounds v up to 1, 2 or 5 times a power of ten.
function niceTop(v) {
  if (!(v > 0)) return 1;
  const p = Math.pow(10, Math.floor(Math.log10(v)));
  for (const m of [1, 2, 5, 10]) if (v <= m * p) return m * p;
  return 10 * p;
}

function render() {
  const last = frames[frames.length - 1];
  if (!last) return;
  const p = last.proxy;
  const root = document.getElementById("proxy");
  setText(root, '[data-metric="proxy-limit"]', p.limit ? fmt(p.limit, 0) : "off");
  setText(root, '[data-metric="proxy-inflight"]', fmt(p.inflight, 0));
  setText(root, '[data-metric="proxy-requests"]', fmt(p.requests, 1));
  setText(root, '[data-metric="proxy-shed"]', fmt(p.shed, 1));
  const names = new Set();
  for (const u of last.upstreams) {
    names.add(u.name);
    const sec = upstreamSection(u.name);
    setText(sec, '[data-metric="goodput"]', fmt(u.goodput, 1));
    setText(sec, '[data-metric="errors"]', fmt(u.errors, 1));
    setText(sec, '[data-metric="p50"]', fmt(u.p50, 1));
    setText(sec, '[data-metric="p99"]', fmt(u.p99, 1));
    setText(sec, '[data-metric="limit"]', u.limit ? fmt(u.limit, 0) : "off");
    setText(sec, '[data-metric="inflight"]', fmt(u.inflight, 0));
    setText(sec, '[data-metric="shed"]', fmt(u.shed, 1));
    setText(sec, '[data-metric="retries"]', fmt(u.retries, 1));
    renderBackends(sec, u.backends || []);
    draw(sec.querySelector('[data-chart="rates"]'), u.name, [["good", (x) => x.goodput], ["bad", (x) => x.errors], ["shed", (x) => x.shed]], last.t);
    draw(sec.querySelector('[data-chart="limit"]'), u.name, [["limit", (x) => x.limit], ["inflight", (x) => x.inflight]], last.t);
    draw(sec.querySelector('[data-chart="latency"]'), u.name, [["p50", (x) => x.p50], ["p99", (x) => x.p99]], last.t);
  }
  for (const sec of [...document.querySelectorAll("section.upstream")]) {
    if (!names.has(sec.dataset.upstream)) sec.remove();
  }
}

function add(f) {
  frames.push(f);
  const cut = f.t - KEEP_MS;
  while (frames.length && frames[0].t < cut) frames.shift();
}

function connect() {
  const conn = document.getElementById("conn");
  const text = document.getElementById("conn-text");
  const es = new EventSource("events");
  es.addEventListener("history", (e) => {
    frames = [];
    for (const f of JSON.parse(e.data)) add(f);
    conn.dataset.state = "live";
    text.textContent = "live";
    render();
  });
  es.addEventListener("frame", (e) => {
    add(JSON.parse(e.data));
    render();
  });
  es.onerror = () => {
    conn.dataset.state = "lost";
    text.textContent = "reconnecting";
  };
}

window.addEventListener("resize", render);
connect();
