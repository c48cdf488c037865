// A Foxglove WebSocket client from npm (@foxglove/ws-protocol) against
// `simvis serve --foxglove`: it connects with the driver token, lists the
// channels and services, subscribes to a scan, /tf, /tf_static and the
// scene and decodes them (CDR with @foxglove/rosmsg2-serialization, the
// scene's JSON checked against @foxglove/schemas' own JSON Schema), sets
// R_POSE.yaw and waits for the next scan, calls the add-part service, adds
// a switch that turns that part off and sees it deleted from the scene, then
// tries setParameters and a service call with the viewer token, and a
// connection without a token. It prints what it saw as one JSON object;
// the Go test (cli/foxglove_test.go) checks it.
//
// usage: node --experimental-websocket foxglove_client.js URL DRIVER_TOKEN VIEWER_TOKEN SCAN_TOPIC NEW_YAW PART_XML
"use strict";
const { FoxgloveClient } = require("@foxglove/ws-protocol");
const { parse } = require("@foxglove/rosmsg");
const { MessageReader } = require("@foxglove/rosmsg2-serialization");
const jsonschemas = require("@foxglove/schemas/jsonschema");
const gltfValidator = require("gltf-validator");

const [url, driverToken, viewerToken, scanTopic, newYaw, partXML] = process.argv.slice(2);
const out = { schemaErrors: [] };

function fail(msg) {
  console.error(msg);
  process.exit(1);
}
setTimeout(() => fail("timed out; so far: " + JSON.stringify(out)), 120000).unref();

// connect opens a client and records what the server announces.
function connect(token) {
  const ws = new WebSocket(url + (token ? "?token=" + encodeURIComponent(token) : ""), [FoxgloveClient.SUPPORTED_SUBPROTOCOL]);
  const client = new FoxgloveClient({ ws });
  const c = { client, channels: new Map(), services: new Map(), statuses: [], info: null, waiters: [] };
  const emit = (kind, msg) => {
    c.waiters = c.waiters.filter((w) => !(w.kind === kind && w.pred(msg) && (w.resolve(msg), true)));
  };
  client.on("serverInfo", (m) => { c.info = m; emit("serverInfo", m); });
  client.on("advertise", (chs) => { for (const ch of chs) c.channels.set(ch.topic, ch); emit("advertise", chs); });
  client.on("advertiseServices", (svs) => { for (const s of svs) c.services.set(s.name, s); emit("advertiseServices", svs); });
  client.on("status", (m) => { c.statuses.push(m); emit("status", m); });
  for (const kind of ["message", "parameterValues", "serviceCallResponse", "serviceCallFailure", "close", "error", "open"]) {
    client.on(kind, (m) => emit(kind, m));
  }
  return c;
}

// next waits for the first event of kind that pred accepts.
function next(c, kind, pred = () => true, ms = 30000) {
  return new Promise((resolve, reject) => {
    const w = { kind, pred, resolve };
    c.waiters.push(w);
    setTimeout(() => reject(new Error(`no ${kind} within ${ms} ms`)), ms).unref();
  });
}

const readers = new Map();
function decodeCDR(ch, data) {
  let r = readers.get(ch.id);
  if (!r) {
    r = new MessageReader(parse(ch.schema, { ros2: true }));
    readers.set(ch.id, r);
  }
  return r.readMessage(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
}

// check compares a JSON value with a JSON Schema: every field sent must be
// one the schema names, with its type (arrays item by item).
function check(value, schema, path) {
  const t = schema.type;
  const is = Array.isArray(value) ? "array" : Number.isInteger(value) ? "integer" : typeof value;
  if (schema.oneOf) {
    if (!schema.oneOf.some((o) => o.const === value)) out.schemaErrors.push(`${path}: ${value} not one of the enum`);
    return;
  }
  if (t === "number" ? !(is === "number" || is === "integer") : t !== is) {
    out.schemaErrors.push(`${path}: ${is}, want ${t}`);
    return;
  }
  if (t === "object") {
    for (const [k, v] of Object.entries(value)) {
      if (!schema.properties || !schema.properties[k]) out.schemaErrors.push(`${path}.${k}: not in the schema`);
      else check(v, schema.properties[k], `${path}.${k}`);
    }
  } else if (t === "array") {
    value.forEach((v, i) => check(v, schema.items, `${path}[${i}]`));
  }
}

async function main() {
  // Driver: channels, services, subscriptions.
  const d = connect(driverToken);
  await next(d, "serverInfo");
  out.capabilities = d.info.capabilities;
  out.supportedEncodings = d.info.supportedEncodings;
  const wanted = [scanTopic, "/tf", "/tf_static", "/simvis/scene", "/simvis/overlays", "/simvis/values"];
  while (!wanted.every((t) => d.channels.has(t))) await next(d, "advertise");
  out.topics = [...d.channels.keys()].sort();
  out.channels = Object.fromEntries([...d.channels.values()].map((ch) => [ch.topic, { encoding: ch.encoding, schemaName: ch.schemaName, schemaEncoding: ch.schemaEncoding }]));
  out.services = [...d.services.keys()].sort();

  const bySub = new Map();
  const latest = new Map(); // topic -> last decoded message
  const seen = new Map(); // topic -> count
  d.client.on("message", (m) => {
    const ch = bySub.get(m.subscriptionId);
    const msg = ch.encoding === "cdr" ? decodeCDR(ch, m.data) : JSON.parse(new TextDecoder().decode(m.data));
    latest.set(ch.topic, msg);
    seen.set(ch.topic, (seen.get(ch.topic) || 0) + 1);
  });
  for (const t of [scanTopic, "/tf", "/tf_static", "/simvis/scene", "/simvis/overlays"]) {
    const ch = d.channels.get(t);
    bySub.set(d.client.subscribe(ch.id), ch);
  }
  const got = (t) => next(d, "message", (m) => bySub.get(m.subscriptionId).topic === t);
  await Promise.all(["/tf", "/tf_static", "/simvis/scene", "/simvis/overlays", scanTopic].map(got));

  const scan = latest.get(scanTopic);
  out.scan = { frame_id: scan.header.frame_id, n: scan.ranges.length, angle_min: scan.angle_min, angle_max: scan.angle_max, range_max: scan.range_max };
  const tfs = (topic) => latest.get(topic).transforms.map((t) => ({ parent: t.header.frame_id, child: t.child_frame_id, t: t.transform }));
  out.tf = tfs("/tf");
  out.tfStatic = tfs("/tf_static");
  const sceneMsg = latest.get("/simvis/scene");
  check(sceneMsg, jsonschemas.SceneUpdate, "scene");
  const overlays = latest.get("/simvis/overlays");
  check(overlays, jsonschemas.SceneUpdate, "overlays");
  out.overlays = overlays.entities.map((e) => ({ id: e.id, frame_id: e.frame_id, texts: e.texts.map((x) => x.text) }));
  out.scene = [];
  for (const e of sceneMsg.entities) {
    const models = [];
    for (const m of e.models) {
      const bytes = Buffer.from(m.data, "base64");
      // Khronos' validator reads the embedded model as Foxglove would get it.
      const report = await gltfValidator.validateBytes(new Uint8Array(bytes));
      models.push({ media_type: m.media_type, magic: bytes.subarray(0, 4).toString("latin1"), bytes: bytes.length,
        gltfErrors: report.issues.numErrors, vertices: report.info.totalVertexCount });
    }
    out.scene.push({ id: e.id, frame_id: e.frame_id, frame_locked: e.frame_locked, models });
  }

  // Parameters: read, subscribe, set, and the next scan.
  d.client.getParameters(["R_POSE.yaw"], "get1");
  out.yawBefore = (await next(d, "parameterValues", (m) => m.id === "get1")).parameters[0].value;
  d.client.subscribeParameterUpdates(["R_POSE.yaw"]);
  const before = Array.from(latest.get(scanTopic).ranges);
  const setAt = Date.now();
  const updated = next(d, "parameterValues", (m) => m.id === undefined && m.parameters.some((p) => p.name === "R_POSE.yaw"));
  d.client.setParameters([{ name: "R_POSE.yaw", value: Number(newYaw), type: "float64" }], "set1");
  const reply = await next(d, "parameterValues", (m) => m.id === "set1");
  out.setReply = reply.parameters;
  out.update = (await updated).parameters;
  // The next scan rendered after the host took the value.
  await got(scanTopic);
  await got(scanTopic);
  const after = Array.from(latest.get(scanTopic).ranges);
  out.scanChanged = before.some((r, i) => Math.abs(r - after[i]) > 1e-3 || (isFinite(r) !== isFinite(after[i])));
  out.setToScanMs = Date.now() - setAt;
  out.tfAfter = tfs("/tf");

  // The add-part service, and a command of the wrong kind.
  const svc = d.services.get("/simvis/add_part");
  const enc = new TextEncoder();
  const call = (c, id, xml) => c.client.sendServiceCallRequest({ serviceId: svc.id, callId: id, encoding: "json", data: enc.encode(JSON.stringify({ xml })) });
  const sceneWithPart = next(d, "message", (m) => bySub.get(m.subscriptionId).topic === "/simvis/scene" &&
    JSON.parse(new TextDecoder().decode(m.data)).entities.some((e) => e.id === "part:ADDED"));
  call(d, 1, partXML);
  const resp = await Promise.race([next(d, "serviceCallResponse", (m) => m.callId === 1), next(d, "serviceCallFailure", (m) => m.callId === 1)]);
  out.addPart = resp.message ? { failure: resp.message } : { encoding: resp.encoding, body: JSON.parse(new TextDecoder().decode(resp.data)) };
  const withPart = await sceneWithPart;
  out.sceneAfterAdd = JSON.parse(new TextDecoder().decode(withPart.data)).entities.map((e) => e.id);
  // A switch element (the add-element service) turns the added part off:
  // the next scene deletes it by id and leaves it out.
  const sw = d.services.get("/simvis/add_element");
  const sceneWithoutPart = next(d, "message", (m) => bySub.get(m.subscriptionId).topic === "/simvis/scene" &&
    JSON.parse(new TextDecoder().decode(m.data)).deletions.length > 0);
  d.client.sendServiceCallRequest({ serviceId: sw.id, callId: 3, encoding: "json",
    data: enc.encode(JSON.stringify({ xml: '<element type="switch" name="HIDE_ADDED" insert_at="ADDED" on="0"/>' })) });
  const off = JSON.parse(new TextDecoder().decode((await sceneWithoutPart).data));
  check(off, jsonschemas.SceneUpdate, "sceneAfterSwitch");
  out.sceneAfterSwitch = { entities: off.entities.map((e) => e.id), deletions: off.deletions.map((x) => ({ type: x.type, id: x.id })) };
  call(d, 2, '<sensor type="psd" name="WRONG" insert_at="ROOT"/>');
  out.wrongKind = (await next(d, "serviceCallFailure", (m) => m.callId === 2)).message;

  // Viewer: may subscribe, may not set or call.
  const v = connect(viewerToken);
  await next(v, "serverInfo");
  out.viewerRole = v.info.metadata && v.info.metadata.role;
  // Both waiters first: the two replies may arrive in one read.
  const refusal = next(v, "status", (m) => m.level === 2);
  const vreply = next(v, "parameterValues", (m) => m.id === "vset");
  v.client.setParameters([{ name: "R_POSE.yaw", value: 1, type: "float64" }], "vset");
  out.viewerStatus = (await refusal).message;
  out.viewerReply = (await vreply).parameters;
  const vcall = next(v, "serviceCallFailure", (m) => m.callId === 7);
  v.client.sendServiceCallRequest({ serviceId: svc.id, callId: 7, encoding: "json", data: enc.encode(JSON.stringify({ xml: partXML })) });
  out.viewerCall = (await vcall).message;
  d.client.getParameters(["R_POSE.yaw"], "get2");
  out.yawAfterViewer = (await next(d, "parameterValues", (m) => m.id === "get2")).parameters[0].value;

  // No token: refused before the WebSocket opens.
  const n = connect("");
  out.noTokenOpened = await Promise.race([next(n, "open").then(() => true), next(n, "close").then(() => false), next(n, "error").then(() => false)]);

  d.client.close();
  v.client.close();
  console.log(JSON.stringify(out));
  process.exit(0);
}

main().catch((e) => fail(e.stack + "\nso far: " + JSON.stringify(out)));
