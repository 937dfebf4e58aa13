// jointspace browser viewer: draws the geoms served at scene.json, posed by the states it
// polls from /state, with WebGL 1 and no library. Lighting as jointspace.viz.raster:
// ambient + key light + headlight, both sides lit, one normal per triangle (flat shading).
"use strict";

const AMBIENT = 0.32, KEY = 0.5, HEAD = 0.28;
const KEY_DIR = normalize([0.35, -0.45, 0.82]);
const CONTACT_RGB = [0.95, 0.25, 0.15], FORCE_RGB = [0.95, 0.55, 0.1];
const COM_RGB = [0.95, 0.85, 0.1];
const AXIS_RGB = [[0.9, 0.15, 0.15], [0.15, 0.75, 0.15], [0.15, 0.3, 0.95]];

const VERTEX = `
attribute vec3 aPos; attribute vec3 aNormal; attribute vec3 aColor;
uniform mat4 uModel; uniform mat4 uViewProj; uniform vec3 uTint; uniform float uUseTint;
varying vec3 vNormal; varying vec3 vColor;
void main() {
  vNormal = mat3(uModel) * aNormal;
  vColor = mix(aColor, uTint, uUseTint);
  gl_Position = uViewProj * uModel * vec4(aPos, 1.0);
}`;
const FRAGMENT = `
precision mediump float;
uniform vec3 uKey; uniform vec3 uForward;
varying vec3 vNormal; varying vec3 vColor;
void main() {
  vec3 n = normalize(vNormal);
  float light = ${AMBIENT} + ${KEY} * abs(dot(n, uKey)) + ${HEAD} * abs(dot(n, uForward));
  gl_FragColor = vec4(clamp(vColor * light, 0.0, 1.0), 1.0);
}`;

function normalize(v) {
  const n = Math.hypot(v[0], v[1], v[2]) || 1;
  return [v[0] / n, v[1] / n, v[2] / n];
}
function cross(a, b) {
  return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
}
function dot(a, b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

// column-major 4x4 from a row-major 3x3 rotation R, translation p and per-axis scale s
function pose(R, p, s) {
  s = s || [1, 1, 1];
  return new Float32Array([
    R[0] * s[0], R[3] * s[0], R[6] * s[0], 0,
    R[1] * s[1], R[4] * s[1], R[7] * s[1], 0,
    R[2] * s[2], R[5] * s[2], R[8] * s[2], 0,
    p[0], p[1], p[2], 1]);
}
// a rotation (row-major) taking +z to the unit vector u
function rotZTo(u) {
  const a = Math.abs(u[0]) < 0.9 ? [1, 0, 0] : [0, 1, 0];
  const x = normalize(cross(a, u)), y = cross(u, x);
  return [x[0], y[0], u[0], x[1], y[1], u[1], x[2], y[2], u[2]];
}
const IDENTITY = [1, 0, 0, 0, 1, 0, 0, 0, 1];

// flat-shaded triangle soup: corners (k*9 floats), one color per triangle (k*3)
function soup(gl, corners, rgb) {
  const k = corners.length / 9;
  const normals = new Float32Array(corners.length), colors = new Float32Array(corners.length);
  for (let t = 0; t < k; t++) {
    const c = corners.slice(9 * t, 9 * t + 9);
    const n = normalize(cross([c[3] - c[0], c[4] - c[1], c[5] - c[2]],
                              [c[6] - c[0], c[7] - c[1], c[8] - c[2]]));
    for (let v = 0; v < 3; v++) {
      normals.set(n, 9 * t + 3 * v);
      colors.set(rgb ? rgb.slice(3 * t, 3 * t + 3) : [1, 1, 1], 9 * t + 3 * v);
    }
  }
  const buffer = data => {
    const b = gl.createBuffer();
    gl.bindBuffer(gl.ARRAY_BUFFER, b);
    gl.bufferData(gl.ARRAY_BUFFER, data, gl.STATIC_DRAW);
    return b;
  };
  return {count: 3 * k, pos: buffer(new Float32Array(corners)), normal: buffer(normals),
          color: buffer(colors)};
}

// unit sphere and a unit rod (radius 1, z from 0 to 1) for the overlays
function sphereCorners(nu, nv) {
  const p = (i, j) => {
    const th = Math.PI * i / nv, ph = 2 * Math.PI * j / nu;
    return [Math.sin(th) * Math.cos(ph), Math.sin(th) * Math.sin(ph), Math.cos(th)];
  };
  const out = [];
  for (let i = 0; i < nv; i++) {
    for (let j = 0; j < nu; j++) {
      out.push(...p(i, j), ...p(i + 1, j), ...p(i, j + 1));
      out.push(...p(i, j + 1), ...p(i + 1, j), ...p(i + 1, j + 1));
    }
  }
  return out;
}
function rodCorners(nu) {
  const out = [];
  for (let j = 0; j < nu; j++) {
    const a = 2 * Math.PI * j / nu, b = 2 * Math.PI * (j + 1) / nu;
    const ca = Math.cos(a), sa = Math.sin(a), cb = Math.cos(b), sb = Math.sin(b);
    out.push(ca, sa, 0, cb, sb, 0, ca, sa, 1, cb, sb, 0, cb, sb, 1, ca, sa, 1);
    out.push(0, 0, 1, ca, sa, 1, cb, sb, 1);
  }
  return out;
}

function orthographic(width, height, near, far) {
  const nf = 1 / (near - far);
  return [2 / width, 0, 0, 0, 0, 2 / height, 0, 0, 0, 0, 2 * nf, 0, 0, 0, (far + near) * nf, 1];
}

function perspective(fovy, aspect, near, far) {
  const f = 1 / Math.tan(fovy / 2), nf = 1 / (near - far);
  return [f / aspect, 0, 0, 0, 0, f, 0, 0, 0, 0, (far + near) * nf, -1,
          0, 0, 2 * far * near * nf, 0];
}
function multiply(a, b) {            // column-major a * b
  const out = new Float32Array(16);
  for (let i = 0; i < 4; i++) {
    for (let j = 0; j < 4; j++) {
      let s = 0;
      for (let k = 0; k < 4; k++) s += a[k * 4 + i] * b[j * 4 + k];
      out[j * 4 + i] = s;
    }
  }
  return out;
}

async function main() {
  const status = document.getElementById("status");
  const [scene, options, first] = await Promise.all(
    ["scene.json", "options.json", "state"].map(u => fetch(u).then(r => r.json())));
  let state = first;
  document.getElementById("title").textContent = scene.model || "jointspace";
  for (const k of ["contacts", "frames", "com"]) document.getElementById(k).checked = options[k];

  const canvas = document.getElementById("c");
  const gl = canvas.getContext("webgl", {antialias: true, preserveDrawingBuffer: true});
  if (!gl) {
    status.textContent = "WebGL is not available in this browser";
    status.dataset.error = "no-webgl";
    return;
  }
  const compile = (type, src) => {
    const s = gl.createShader(type);
    gl.shaderSource(s, src);
    gl.compileShader(s);
    if (!gl.getShaderParameter(s, gl.COMPILE_STATUS)) throw new Error(gl.getShaderInfoLog(s));
    return s;
  };
  const prog = gl.createProgram();
  gl.attachShader(prog, compile(gl.VERTEX_SHADER, VERTEX));
  gl.attachShader(prog, compile(gl.FRAGMENT_SHADER, FRAGMENT));
  gl.linkProgram(prog);
  gl.useProgram(prog);
  const loc = n => gl.getUniformLocation(prog, n);
  const attr = ["aPos", "aNormal", "aColor"].map(n => gl.getAttribLocation(prog, n));
  attr.forEach(a => gl.enableVertexAttribArray(a));
  const uModel = loc("uModel"), uViewProj = loc("uViewProj"), uKey = loc("uKey");
  const uForward = loc("uForward"), uTint = loc("uTint"), uUseTint = loc("uUseTint");
  gl.uniform3fv(uKey, KEY_DIR);
  gl.enable(gl.DEPTH_TEST);

  const geoms = scene.geoms.map(g => ({id: g.id, mesh: soup(gl, g.pos, g.rgb)}));
  const sphere = soup(gl, sphereCorners(12, 8), null);
  const rod = soup(gl, rodCorners(10), null);
  const extent = scene.extent;

  const cam = {azimuth: 135, elevation: -18, distance: 3.0 * extent, target: state.com.slice()};
  let drag = null;
  canvas.addEventListener("mousedown", e => { drag = {x: e.clientX, y: e.clientY, pan: e.shiftKey}; });
  window.addEventListener("mouseup", () => { drag = null; });
  window.addEventListener("mousemove", e => {
    if (!drag) return;
    const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
    drag.x = e.clientX;
    drag.y = e.clientY;
    if (drag.pan) {
      document.getElementById("track").checked = false;
      const f = forwardDir(), right = normalize(cross(f, [0, 0, 1])), up = cross(right, f);
      const s = cam.distance * 0.0015;
      for (let i = 0; i < 3; i++) cam.target[i] += s * (-dx * right[i] + dy * up[i]);
    } else {
      cam.azimuth -= 0.3 * dx;
      cam.elevation = Math.max(-89, Math.min(89, cam.elevation - 0.3 * dy));
    }
    dirty = true;
  });
  canvas.addEventListener("wheel", e => {
    e.preventDefault();
    cam.distance *= Math.exp(0.001 * e.deltaY);
    dirty = true;
  }, {passive: false});
  for (const k of ["contacts", "frames", "com", "track"]) {
    document.getElementById(k).addEventListener("change", () => { dirty = true; });
  }

  function forwardDir() {
    const az = cam.azimuth * Math.PI / 180, el = cam.elevation * Math.PI / 180;
    return [Math.cos(el) * Math.cos(az), Math.cos(el) * Math.sin(az), Math.sin(el)];
  }

  function draw(mesh, model, tint) {
    gl.uniformMatrix4fv(uModel, false, model);
    gl.uniform1f(uUseTint, tint ? 1 : 0);
    if (tint) gl.uniform3fv(uTint, tint);
    [mesh.pos, mesh.normal, mesh.color].forEach((b, i) => {
      gl.bindBuffer(gl.ARRAY_BUFFER, b);
      gl.vertexAttribPointer(attr[i], 3, gl.FLOAT, false, 0, 0);
    });
    gl.drawArrays(gl.TRIANGLES, 0, mesh.count);
  }

  let dirty = true, draws = 0;
  function frame() {
    requestAnimationFrame(frame);
    const w = canvas.clientWidth * devicePixelRatio, h = canvas.clientHeight * devicePixelRatio;
    if (canvas.width !== w || canvas.height !== h) {
      canvas.width = w;
      canvas.height = h;
      dirty = true;
    }
    if (!dirty) return;
    dirty = false;
    if (document.getElementById("track").checked) cam.target = state.com.slice();
    // a model camera (view --camera NAME) sends its eye, axes (right, up, forward), fovy
    const mc = state.cam;
    const f = mc ? mc.rot.slice(6, 9) : forwardDir();
    const eye = mc ? mc.eye : cam.target.map((t, i) => t - cam.distance * f[i]);
    const right = mc ? mc.rot.slice(0, 3) : normalize(cross(f, [0, 0, 1]));
    const up = mc ? mc.rot.slice(3, 6) : cross(right, f);
    const view = [right[0], up[0], -f[0], 0, right[1], up[1], -f[1], 0,
                  right[2], up[2], -f[2], 0,
                  -dot(right, eye), -dot(up, eye), dot(f, eye), 1];
    const proj = mc && mc.orthographic
      ? orthographic(mc.fovy * w / h, mc.fovy, 0.01 * extent, 200 * extent)
      : perspective((mc ? mc.fovy : 45) * Math.PI / 180, w / h, 0.01 * extent, 200 * extent);
    gl.viewport(0, 0, w, h);
    gl.clearColor(0.78, 0.83, 0.87, 1);
    gl.clear(gl.COLOR_BUFFER_BIT | gl.DEPTH_BUFFER_BIT);
    gl.uniformMatrix4fv(uViewProj, false, multiply(proj, view));
    gl.uniform3fv(uForward, f);

    let objects = 0;
    for (const g of geoms) {
      const R = state.geom_xmat.slice(9 * g.id, 9 * g.id + 9);
      draw(g.mesh, pose(R, state.geom_xpos.slice(3 * g.id, 3 * g.id + 3)), null);
      objects++;
    }
    const r = 0.015 * extent;
    let ncontacts = 0;
    if (document.getElementById("contacts").checked) {
      for (let i = 0; i < state.ncon; i++) {
        const p = state.contact_pos.slice(3 * i, 3 * i + 3);
        draw(sphere, pose(IDENTITY, p, [r, r, r]), CONTACT_RGB);
        const len = 0.5 * extent * state.contact_force[i];
        if (len > 0) {
          const n = state.contact_normal.slice(3 * i, 3 * i + 3);
          draw(rod, pose(rotZTo(n), p, [0.4 * r, 0.4 * r, len]), FORCE_RGB);
          objects++;
        }
        objects++;
        ncontacts++;
      }
    }
    if (document.getElementById("frames").checked) {
      for (let b = 1; b < scene.nbody; b++) {
        const R = state.xmat.slice(9 * b, 9 * b + 9), p = state.xpos.slice(3 * b, 3 * b + 3);
        for (let a = 0; a < 3; a++) {
          draw(rod, pose(rotZTo([R[a], R[3 + a], R[6 + a]]), p, [0.3 * r, 0.3 * r, 0.1 * extent]),
               AXIS_RGB[a]);
          objects++;
        }
      }
    }
    if (document.getElementById("com").checked) {
      draw(sphere, pose(IDENTITY, state.com, [2 * r, 2 * r, 2 * r]), COM_RGB);
      objects++;
    }
    draws++;
    status.dataset.objects = objects;
    status.dataset.geoms = geoms.length;
    status.dataset.contacts = ncontacts;
    status.dataset.draws = draws;
    status.dataset.version = state.version;
    status.textContent = `t = ${state.time.toFixed(3)} s · ${state.ncon} contacts · ` +
                         `${geoms.length} geoms`;
  }
  requestAnimationFrame(frame);

  // poll for new poses: 204 means no news since our version
  async function poll() {
    try {
      const r = await fetch("state?after=" + state.version, {cache: "no-store"});
      if (r.status === 200) {
        state = await r.json();
        dirty = true;
      }
      setTimeout(poll, 1000 / 60);
    } catch (err) {
      status.dataset.disconnected = "1";
      setTimeout(poll, 1000);           // the server stopped; keep the last picture
    }
  }
  poll();
}

main().catch(err => {
  const status = document.getElementById("status");
  status.textContent = "error: " + err.message;
  status.dataset.error = err.message;
});
