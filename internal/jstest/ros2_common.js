// Shared by simvis's ROS 2 checks: decode CDR with @foxglove/rosmsg2-serialization
// from a ros2msg schema parsed by @foxglove/rosmsg, and make decoded values JSON
// (non-finite numbers as strings, byte arrays as base64, typed arrays as arrays).
"use strict";
const { parse } = require("@foxglove/rosmsg");
const { MessageReader } = require("@foxglove/rosmsg2-serialization");

const readers = new Map();

function reader(schema) {
  let r = readers.get(schema);
  if (!r) {
    r = new MessageReader(parse(schema, { ros2: true }));
    readers.set(schema, r);
  }
  return r;
}

function plain(v) {
  if (typeof v === "number") {
    return Number.isFinite(v) ? v : String(v);
  }
  if (typeof v === "bigint") {
    return Number(v);
  }
  if (v instanceof Uint8Array || v instanceof Int8Array) {
    return { base64: Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString("base64") };
  }
  if (ArrayBuffer.isView(v)) {
    return Array.from(v, plain);
  }
  if (Array.isArray(v)) {
    return v.map(plain);
  }
  if (v && typeof v === "object") {
    const o = {};
    for (const [k, x] of Object.entries(v)) {
      o[k] = plain(x);
    }
    return o;
  }
  return v;
}

// decode returns the message and whether the decoder left bytes unread
// (a sign the payload does not match its schema).
function decode(schema, bytes) {
  const r = reader(schema);
  const msg = r.readMessage(bytes);
  return { msg: plain(msg), trailing: r.lastReadHadTrailingBytes(), consumed: r.lastReadByteLength() };
}

module.exports = { decode, plain };
