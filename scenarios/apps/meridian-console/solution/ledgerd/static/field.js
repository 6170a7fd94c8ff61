"use strict";
// The 3D field: one instanced column per payment, raw WebGL2, id-buffer picking.
(function () {
  const canvas = document.getElementById("field");
  const pick = document.getElementById("pick");
  const COLS = 128, ROWS = 96, CELL = 8;
  const COLORS = { p: [0xf0, 0xb4, 0x29], s: [0x2f, 0x9e, 0x44], f: [0xe0, 0x31, 0x31], r: [0x1c, 0x7e, 0xd6] };
  const NAMES = { p: "pending", s: "settled", f: "failed", r: "refunded" };
  const PLANE = [0x0b / 255, 0x1e / 255, 0x2d / 255];
  const dpr = window.devicePixelRatio || 1;
  canvas.width = 1024 * dpr;
  canvas.height = 768 * dpr;
  const gl = canvas.getContext("webgl2", { preserveDrawingBuffer: true, antialias: false });
  if (!gl) { pick.textContent = "WebGL2 is not available"; return; }

  const VS = `#version 300 es
  in vec3 a_pos; in vec2 a_cell; in float a_h; in vec3 a_color; in float a_id;
  uniform mat4 u_m; out vec3 v_color; flat out float v_id;
  void main() {
    vec3 w = vec3(a_cell.x + 0.5 + a_pos.x * 0.8, a_pos.y * a_h, a_cell.y + 0.5 + a_pos.z * 0.8);
    gl_Position = u_m * vec4(w, 1.0);
    v_color = a_color; v_id = a_id;
  }`;
  const FS = `#version 300 es
  precision highp float; in vec3 v_color; flat in float v_id; uniform int u_pick; out vec4 o;
  void main() {
    if (u_pick == 1) {
      float id = v_id;
      o = vec4(mod(id, 256.0), mod(floor(id / 256.0), 256.0), floor(id / 65536.0), 255.0) / 255.0;
    } else { o = vec4(v_color, 1.0); }
  }`;

  function shader(type, src) {
    const s = gl.createShader(type);
    gl.shaderSource(s, src);
    gl.compileShader(s);
    if (!gl.getShaderParameter(s, gl.COMPILE_STATUS)) throw new Error(gl.getShaderInfoLog(s));
    return s;
  }
  const prog = gl.createProgram();
  gl.attachShader(prog, shader(gl.VERTEX_SHADER, VS));
  gl.attachShader(prog, shader(gl.FRAGMENT_SHADER, FS));
  gl.linkProgram(prog);
  const loc = (n) => gl.getAttribLocation(prog, n);
  const uM = gl.getUniformLocation(prog, "u_m");
  const uPick = gl.getUniformLocation(prog, "u_pick");

  // a unit column: x, z in [-0.5, 0.5], y in [0, 1]; 6 faces, 36 vertices
  const cube = [];
  const quad = (a, b, c, d) => cube.push(...a, ...b, ...c, ...a, ...c, ...d);
  const P = (x, y, z) => [x - 0.5, y, z - 0.5];
  quad(P(0, 1, 0), P(1, 1, 0), P(1, 1, 1), P(0, 1, 1));
  quad(P(0, 0, 0), P(1, 0, 0), P(1, 1, 0), P(0, 1, 0));
  quad(P(0, 0, 1), P(1, 0, 1), P(1, 1, 1), P(0, 1, 1));
  quad(P(0, 0, 0), P(0, 0, 1), P(0, 1, 1), P(0, 1, 0));
  quad(P(1, 0, 0), P(1, 0, 1), P(1, 1, 1), P(1, 1, 0));
  const vao = gl.createVertexArray();
  gl.bindVertexArray(vao);
  function buffer(data, name, size, divisor) {
    const b = gl.createBuffer();
    gl.bindBuffer(gl.ARRAY_BUFFER, b);
    gl.bufferData(gl.ARRAY_BUFFER, data, gl.STATIC_DRAW);
    const l = loc(name);
    gl.enableVertexAttribArray(l);
    gl.vertexAttribPointer(l, size, gl.FLOAT, false, 0, 0);
    gl.vertexAttribDivisor(l, divisor);
    return b;
  }
  buffer(new Float32Array(cube), "a_pos", 3, 0);
  const bufs = {};
  let count = 0, statuses = "", digest = "";

  // orthographic orbit: rotate about the field's centre; default pitch 90 degrees (top down)
  let yaw = 0, pitch = Math.PI / 2;
  function matrix() {
    const cy = Math.cos(yaw), sy = Math.sin(yaw), cp = Math.cos(pitch), sp = Math.sin(pitch);
    // world -> centred -> rotY(yaw) -> rotX(pitch) -> ortho (x/64, y/48, -z/200)
    const R = [
      [cy, 0, sy],
      [sp * sy, cp, -sp * cy],
      [-cp * sy, sp, cp * cy],
    ];
    // rotX(p) * rotY(y): rows as above for (x, y, z) input
    const S = [1 / 64, 1 / 48, -1 / 200];
    const c = [COLS / 2, 0, ROWS / 2];
    const m = new Float32Array(16); // column-major
    for (let r = 0; r < 3; r++) {
      for (let k = 0; k < 3; k++) m[k * 4 + r] = S[r] * R[r][k];
      m[12 + r] = -S[r] * (R[r][0] * c[0] + R[r][1] * c[1] + R[r][2] * c[2]);
    }
    m[15] = 1;
    return m;
  }

  const fbo = gl.createFramebuffer();
  const rb = gl.createRenderbuffer(), db = gl.createRenderbuffer();
  gl.bindRenderbuffer(gl.RENDERBUFFER, rb);
  gl.renderbufferStorage(gl.RENDERBUFFER, gl.RGBA8, canvas.width, canvas.height);
  gl.bindRenderbuffer(gl.RENDERBUFFER, db);
  gl.renderbufferStorage(gl.RENDERBUFFER, gl.DEPTH_COMPONENT16, canvas.width, canvas.height);
  gl.bindFramebuffer(gl.FRAMEBUFFER, fbo);
  gl.framebufferRenderbuffer(gl.FRAMEBUFFER, gl.COLOR_ATTACHMENT0, gl.RENDERBUFFER, rb);
  gl.framebufferRenderbuffer(gl.FRAMEBUFFER, gl.DEPTH_ATTACHMENT, gl.RENDERBUFFER, db);
  gl.bindFramebuffer(gl.FRAMEBUFFER, null);

  function draw(picking) {
    gl.bindFramebuffer(gl.FRAMEBUFFER, picking ? fbo : null);
    gl.viewport(0, 0, canvas.width, canvas.height);
    gl.enable(gl.DEPTH_TEST);
    if (picking) gl.clearColor(0, 0, 0, 1); else gl.clearColor(PLANE[0], PLANE[1], PLANE[2], 1);
    gl.clear(gl.COLOR_BUFFER_BIT | gl.DEPTH_BUFFER_BIT);
    if (count > 0) {
      gl.useProgram(prog);
      gl.uniformMatrix4fv(uM, false, matrix());
      gl.uniform1i(uPick, picking ? 1 : 0);
      gl.bindVertexArray(vao);
      gl.drawArraysInstanced(gl.TRIANGLES, 0, 36, count);
    }
    gl.bindFramebuffer(gl.FRAMEBUFFER, null);
  }

  let queued = false;
  function redraw() {
    if (queued) return;
    queued = true;
    requestAnimationFrame(() => { queued = false; draw(false); });
  }

  async function load() {
    const r = await fetch("/api/field");
    if (!r.ok) return;
    const d = await r.json();
    const key = d.n + ":" + d.status + ":" + d.heights.join(",");
    if (key === digest) return;
    digest = key;
    count = d.n;
    statuses = d.status;
    const cell = new Float32Array(count * 2), h = new Float32Array(count);
    const color = new Float32Array(count * 3), id = new Float32Array(count);
    for (let i = 0; i < count; i++) {
      cell[2 * i] = i % COLS;
      cell[2 * i + 1] = Math.floor(i / COLS);
      h[i] = 0.05 + d.heights[i] / 10;
      const c = COLORS[d.status[i]] || [255, 255, 255];
      color[3 * i] = c[0] / 255; color[3 * i + 1] = c[1] / 255; color[3 * i + 2] = c[2] / 255;
      id[i] = i + 1;
    }
    gl.bindVertexArray(vao);
    for (const [name, data, size] of [["a_cell", cell, 2], ["a_h", h, 1], ["a_color", color, 3], ["a_id", id, 1]]) {
      if (bufs[name]) gl.deleteBuffer(bufs[name]);
      bufs[name] = buffer(data, name, size, 1);
    }
    redraw();
  }

  function show(index, p) {
    pick.replaceChildren();
    pick.dataset.id = p.id;
    const parts = [p.id, p.counterparty, `${p.amount} ${p.currency}`, p.status];
    for (const t of parts) {
      const s = document.createElement("span");
      s.textContent = t;
      s.className = "pick-part";
      pick.append(s, " ");
    }
    pick.dataset.index = String(index);
  }

  async function pickAt(clientX, clientY) {
    const b = canvas.getBoundingClientRect();
    const x = Math.floor((clientX - b.left) * dpr), y = Math.floor((clientY - b.top) * dpr);
    draw(true);
    gl.bindFramebuffer(gl.FRAMEBUFFER, fbo);
    const px = new Uint8Array(4);
    gl.readPixels(x, canvas.height - 1 - y, 1, 1, gl.RGBA, gl.UNSIGNED_BYTE, px);
    gl.bindFramebuffer(gl.FRAMEBUFFER, null);
    draw(false);
    const idx = px[0] + px[1] * 256 + px[2] * 65536 - 1;
    if (idx < 0 || idx >= count) { pick.replaceChildren(); delete pick.dataset.id; return; }
    const page = Math.floor(idx / 100) + 1;
    const r = await fetch(`/api/payments?per_page=100&page=${page}`);
    if (!r.ok) return;
    const d = await r.json();
    const p = d.items[idx % 100];
    if (p) show(idx, p);
  }

  let drag = null, moved = false;
  canvas.addEventListener("mousedown", (e) => { if (e.button === 0) { drag = [e.clientX, e.clientY]; moved = false; } });
  window.addEventListener("mousemove", (e) => {
    if (!drag) return;
    const dx = e.clientX - drag[0], dy = e.clientY - drag[1];
    if (Math.abs(dx) + Math.abs(dy) < 3 && !moved) return;
    moved = true;
    drag = [e.clientX, e.clientY];
    yaw += dx * 0.01;
    pitch = Math.min(Math.PI / 2, Math.max(0.35, pitch - dy * 0.01));
    redraw();
  });
  window.addEventListener("mouseup", (e) => {
    if (drag && !moved) pickAt(e.clientX, e.clientY).catch(() => {});
    drag = null;
  });
  document.getElementById("field-reset").addEventListener("click", () => {
    yaw = 0; pitch = Math.PI / 2; redraw();
  });
  load().catch(() => {});
  setInterval(() => load().catch(() => {}), 4000);
  window.meridianField = { statuses: () => statuses, count: () => count, names: NAMES };
})();
