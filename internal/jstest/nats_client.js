// A simvis NATS client written from ipc/natsipc/NATS.md alone, with the
// npm nats package: the Go test (ipc/natsipc TestJavaScriptClient) runs it
// against a host and checks what it prints.
//
//   node nats_client.js nats://USER:PASSWORD@HOST:PORT NAME
//
// It lists the elements (desc), reads a snapshot, sets R_POSE.yaw to 64 and
// waits to see it, sends a request, follows the change log up to that
// request, prints "READY", then decodes one frame of each sensor kind that
// desc lists (reassembling chunks) and prints "RESULT {json}".
"use strict";
const { connect, headers } = require("nats");

const [serverURL, name] = process.argv.slice(2);
const enc = new TextEncoder();
const dec = new TextDecoder();
const subj = (what) => `simvis.${name}.${what}`;

// Values message (NATS.md): u64 epoch, u64 cycle, u32 values_used,
// u32 state, u32 n, n x (u32 index, f64 value).
function decodeValues(data) {
  const v = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const n = v.getUint32(24, true);
  if (data.byteLength !== 28 + 12 * n) throw new Error(`values message of ${data.byteLength} bytes for ${n} pairs`);
  const pairs = new Map();
  for (let i = 0; i < n; i++) pairs.set(v.getUint32(28 + 12 * i, true), v.getFloat64(32 + 12 * i, true));
  return { epoch: v.getBigUint64(0, true).toString(), cycle: Number(v.getBigUint64(8, true)), used: v.getUint32(16, true), state: v.getUint32(20, true), pairs };
}

// Set message: u64 epoch, u32 n, n x (u32 index, f64 value).
function encodeSet(epoch, writes) {
  const b = new Uint8Array(12 + 12 * writes.length);
  const v = new DataView(b.buffer);
  v.setBigUint64(0, BigInt(epoch), true);
  v.setUint32(8, writes.length, true);
  writes.forEach(([i, x], k) => {
    v.setUint32(12 + 12 * k, i, true);
    v.setFloat64(16 + 12 * k, x, true);
  });
  return b;
}

async function main() {
  const u = new URL(serverURL);
  // Replies come to the role's inbox prefix (NATS.md, "Roles"): a driver's.
  const nc = await connect({ servers: `${u.hostname}:${u.port}`, user: decodeURIComponent(u.username), pass: decodeURIComponent(u.password), inboxPrefix: "_INBOX.d" });
  const out = {};

  // list
  const desc = JSON.parse(dec.decode((await nc.request(subj("desc"), new Uint8Array(0), { timeout: 5000 })).data));
  if (typeof desc.epoch !== "string") throw new Error("epoch is not a string");
  out.epoch = desc.epoch;
  out.elements = desc.elements.map((e) => `${e.name}:${e.type}:${e.start}:${e.params.join(",")}`);
  const pose = desc.elements.find((e) => e.name === "R_POSE");
  const yaw = pose.start + pose.params.indexOf("yaw");

  // snapshot
  const snap = decodeValues((await nc.request(subj("snapshot"), new Uint8Array(0), { timeout: 5000 })).data);
  if (snap.epoch !== desc.epoch || snap.used !== desc.values_used) throw new Error("snapshot of another run");
  out.yawBefore = snap.pairs.get(yaw);

  // set, then see the host's values carry it
  nc.publish(subj("set"), encodeSet(desc.epoch, [[yaw, 64]]));
  for (let t = 0; ; t++) {
    const s = decodeValues((await nc.request(subj("snapshot"), new Uint8Array(0), { timeout: 5000 })).data);
    if (s.pairs.get(yaw) === 64) break;
    if (t > 200) throw new Error("the set value never came back");
    await new Promise((r) => setTimeout(r, 25));
  }
  out.yawAfter = 64;

  // request
  const h = headers();
  h.set("Simvis-Client", "the JavaScript test");
  const reply = JSON.parse(dec.decode((await nc.request(subj("request"), enc.encode('<element type="pose" name="JS" insert_at="ROOT" yaw="7"/>'), { timeout: 10000, headers: h })).data));
  if (reply.error) throw new Error(reply.error);
  out.requestSeq = reply.seq;

  // follow the log from record 1 up to the request
  const js = nc.jetstream();
  const consumer = await js.consumers.get(`SIMVIS_${name}`);
  const messages = await consumer.consume();
  out.log = [];
  for await (const m of messages) {
    const seq = Number(m.headers.get("Simvis-Seq"));
    if (m.headers.get("Simvis-Epoch") !== desc.epoch) throw new Error("a record of another run");
    if (seq !== out.log.length + 1) throw new Error(`record ${seq} after ${out.log.length}`);
    const files = m.headers.has("Simvis-Files") ? JSON.parse(m.headers.get("Simvis-Files")) : [];
    out.log.push({ seq, source: m.headers.get("Simvis-Source"), xml: dec.decode(m.data), files });
    if (seq === out.requestSeq) break;
  }
  await messages.close();

  // frames: one of each kind desc lists
  const kinds = new Map(desc.sensors.map((s) => [s.subject, s.kind]));
  out.sensors = desc.sensors.map((s) => `${s.name}:${s.type}:${s.kind}:${s.rate_hz}`);
  const wanted = new Set(desc.sensors.map((s) => s.kind));
  const sub = nc.subscribe(subj("sensor.>"));
  await nc.flush();
  console.log("READY");
  out.frames = {};
  out.chunked = [];
  const partial = new Map();
  for await (const m of sub) {
    const kind = m.headers.get("Simvis-Kind");
    if (kinds.get(m.subject) !== kind) throw new Error(`${m.subject}: kind ${kind}, desc says ${kinds.get(m.subject)}`);
    let data = m.data;
    if (m.headers.has("Simvis-Chunk")) {
      const [i, n] = m.headers.get("Simvis-Chunk").split("/").map(Number);
      const id = m.headers.get("Simvis-Frame");
      let p = partial.get(m.subject);
      if (i === 0) p = { id, next: 0, parts: [], size: Number(m.headers.get("Simvis-Size")) };
      if (!p || p.id !== id || p.next !== i) { partial.delete(m.subject); continue; } // a lost chunk: drop the frame
      p.parts.push(m.data);
      p.next++;
      partial.set(m.subject, p);
      if (p.next < n) continue;
      partial.delete(m.subject);
      data = new Uint8Array(p.size);
      let off = 0;
      for (const part of p.parts) { data.set(part, off); off += part.length; }
      if (off !== p.size) continue;
      out.chunked.push(kind);
    }
    if (out.frames[kind]) continue;
    out.frames[kind] = decodeFrame(kind, m.headers.has("Simvis-Info") ? JSON.parse(m.headers.get("Simvis-Info")) : null, data);
    if (Object.keys(out.frames).length === wanted.size) break;
  }
  console.log("RESULT " + JSON.stringify(out));
  await nc.close();
}

// decodeFrame reads what NATS.md says each kind carries, and returns a few
// numbers the Go test checks against the frames it published.
function decodeFrame(kind, info, data) {
  const v = new DataView(data.buffer, data.byteOffset, data.byteLength);
  switch (kind) {
    case "scan": {
      const s = JSON.parse(dec.decode(data));
      if (!Array.isArray(s.too_close)) throw new Error("scan without too_close");
      return { sensor: s.sensor, beams: s.ranges.length, first: s.ranges[0], frame: s.stamp.frame, angleMin: s.angle_min };
    }
    case "psd": {
      const p = JSON.parse(dec.decode(data));
      if (typeof p.too_close !== "boolean") throw new Error("psd without too_close");
      return { sensor: p.sensor, range: p.range, frame: p.stamp.frame };
    }
    case "image": {
      const { width, height } = info.intrinsics;
      if (data.length !== width * height * 3) throw new Error(`image of ${data.length} bytes for ${width}x${height}`);
      const at = 3 * ((height >> 1) * width + (width >> 1));
      return { sensor: info.sensor, width, height, center: [data[at], data[at + 1], data[at + 2]], frame: info.stamp.frame };
    }
    case "depth": {
      const { width, height } = info.intrinsics;
      if (data.length !== width * height * 4) throw new Error(`depth of ${data.length} bytes for ${width}x${height}`);
      return { sensor: info.sensor, width, height, center: v.getFloat32(4 * ((height >> 1) * width + (width >> 1)), true) };
    }
    case "cloud": {
      const n = info.width * info.height;
      if (data.length !== 12 * n) throw new Error(`cloud of ${data.length} bytes for ${n} points`);
      let finite = 0;
      for (let i = 0; i < n; i++) if (!Number.isNaN(v.getFloat32(12 * i, true))) finite++;
      return { sensor: info.sensor, points: n, finite };
    }
    case "segmentation": {
      const { width, height } = info.intrinsics;
      const n = width * height;
      if (data.length !== 4 * n) throw new Error(`segmentation of ${data.length} bytes for ${width}x${height}`);
      const at = (height >> 1) * width + (width >> 1);
      return { sensor: info.sensor, instance: v.getUint16(2 * at, true), class: v.getUint16(2 * (n + at), true), instances: Object.keys(info.instances).length };
    }
  }
  throw new Error(`unknown kind ${kind}`);
}

main().catch((err) => {
  console.error(err && err.stack ? err.stack : String(err));
  process.exit(1);
});
