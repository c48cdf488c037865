// Usage: node ros2bag_check.js FILE.mcap
// An independent ROS 2 bag checker, written from the MCAP ros2 profile
// (mcap.dev spec/registry, "ros2") and the rules rosbag2's MCAP storage
// plugin and rosbags apply when they open a bag (rosbag2_storage_mcap:
// the topic's serialization format is its channel's message encoding and
// all topics share one; offered_qos_profiles in channel metadata is a YAML
// list of QoS profiles; Statistics give start time, duration and counts;
// a "rosbag2" metadata record's serialized_metadata is the bag's
// metadata.yaml with every field present. rosbags refuses schema encodings
// other than ros2msg and ros2idl). Reads the file with @mcap/core (indexed,
// through its summary, and as a stream) and decodes every message with
// @foxglove/rosmsg2-serialization from the file's own schemas. The YAML is
// parsed by a small parser of its own (block mappings and sequences,
// flow {} and [], plain, quoted and numeric scalars), not by simvis code.
// Prints one JSON object: {ok, problems, topics: {TOPIC: {type, count,
// durability, reliability, history, depth}}, start, end, messages,
// rosbag2}; exits 1 when there is any problem.
"use strict";
const fs = require("fs");
const { McapIndexedReader, McapStreamReader } = require("@mcap/core");
const zstd = require("@foxglove/wasm-zstd");
const lz4 = require("@foxglove/wasm-lz4");
const { decode } = require("./ros2_common");

// parseYAML parses the block YAML rosbag2 writes.
function parseYAML(text) {
  const lines = [];
  for (const raw of text.split("\n")) {
    if (raw.trim() === "" || raw.trim().startsWith("#")) continue;
    if (/\t/.test(raw.match(/^\s*/)[0])) throw new Error("tab in indentation");
    lines.push({ indent: raw.match(/^ */)[0].length, text: raw.trim() });
  }
  let i = 0;
  function scalar(s) {
    if (s === "" || s === "~" || s === "null") return null;
    if (s === "{}") return {};
    if (s === "[]") return [];
    if (s === "true" || s === "false") return s === "true";
    if (/^-?\d+$/.test(s)) return Number(s);
    if (s.startsWith('"')) return JSON.parse(s);
    if (s.startsWith("'")) return s.slice(1, -1).replace(/''/g, "'");
    return s;
  }
  function splitKey(s) {
    const m = s.match(/^("(?:[^"\\]|\\.)*"|[^:"]+):(?: (.*))?$/);
    if (!m) throw new Error(`not a mapping entry: ${s}`);
    const key = m[1].startsWith('"') ? JSON.parse(m[1]) : m[1];
    return [key, m[2] === undefined ? "" : m[2].trim()];
  }
  function block(indent) {
    if (i >= lines.length) return null;
    if (lines[i].text.startsWith("- ") || lines[i].text === "-") {
      const out = [];
      while (i < lines.length && lines[i].indent === indent && (lines[i].text.startsWith("- ") || lines[i].text === "-")) {
        const rest = lines[i].text.slice(2).trim();
        if (rest === "") {
          i++;
          out.push(block(lines[i].indent));
        } else if (/^("(?:[^"\\]|\\.)*"|[^:"]+):( |$)/.test(rest)) {
          // "- key: v" opens a mapping whose further keys align with key.
          lines[i] = { indent: indent + 2, text: rest };
          out.push(block(indent + 2));
        } else {
          out.push(scalar(rest));
          i++;
        }
      }
      return out;
    }
    const out = {};
    while (i < lines.length && lines[i].indent === indent && !lines[i].text.startsWith("- ")) {
      const [k, v] = splitKey(lines[i].text);
      if (k in out) throw new Error(`duplicate key ${k}`);
      i++;
      if (v === "") {
        if (i < lines.length && (lines[i].indent > indent || (lines[i].indent === indent && lines[i].text.startsWith("- ")))) {
          out[k] = block(lines[i].indent);
        } else {
          out[k] = null;
        }
      } else {
        out[k] = scalar(v);
      }
    }
    if (i < lines.length && lines[i].indent > indent) throw new Error(`bad indentation at: ${lines[i].text}`);
    return out;
  }
  const v = block(lines.length ? lines[0].indent : 0);
  if (i !== lines.length) throw new Error(`unparsed YAML from: ${lines[i].text}`);
  return v;
}

// rmw's policy numbers (the form of metadata version <= 8) and names (9+).
const POLICIES = {
  history: ["system_default", "keep_last", "keep_all", "unknown"],
  reliability: ["system_default", "reliable", "best_effort", "unknown", "best_available"],
  durability: ["system_default", "transient_local", "volatile", "unknown", "best_available"],
  liveliness: ["system_default", "automatic", "manual_by_node", "manual_by_topic", "unknown", "best_available"],
};

function policy(kind, v) {
  if (typeof v === "number") return POLICIES[kind][v];
  if (typeof v === "string" && POLICIES[kind].includes(v)) return v;
  throw new Error(`${kind}: ${JSON.stringify(v)} is not an rmw policy`);
}

function duration(name, v) {
  if (!v || typeof v.sec !== "number" || typeof v.nsec !== "number") {
    throw new Error(`${name}: want {sec, nsec}, got ${JSON.stringify(v)}`);
  }
}

// checkQoS returns the first profile's policies, throwing what rosbag2's
// QoS decoder would refuse.
function checkQoS(yaml) {
  const list = parseYAML(yaml);
  if (!Array.isArray(list) || list.length === 0) throw new Error("offered_qos_profiles: not a non-empty YAML list");
  let first;
  for (const p of list) {
    const q = {
      history: policy("history", p.history),
      reliability: policy("reliability", p.reliability),
      durability: policy("durability", p.durability),
      liveliness: policy("liveliness", p.liveliness),
      depth: p.depth,
    };
    if (typeof p.depth !== "number") throw new Error("depth: not a number");
    for (const d of ["deadline", "lifespan", "liveliness_lease_duration"]) duration(d, p[d]);
    if (typeof p.avoid_ros_namespace_conventions !== "boolean") throw new Error("avoid_ros_namespace_conventions: not a bool");
    first = first || q;
  }
  return first;
}

async function main() {
  await zstd.isLoaded;
  await lz4.isLoaded;
  const decompressHandlers = {
    zstd: (buf, size) => zstd.decompress(buf, Number(size)),
    lz4: (buf, size) => lz4(buf, Number(size)),
  };
  const file = process.argv[2];
  const bytes = fs.readFileSync(file);
  const problems = [];
  const problem = (s) => { if (problems.length < 50) problems.push(s); };
  const readable = {
    size: async () => BigInt(bytes.length),
    read: async (offset, length) => new Uint8Array(bytes.buffer, bytes.byteOffset + Number(offset), Number(length)),
  };
  const ir = await McapIndexedReader.Initialize({ readable, decompressHandlers });
  const out = { ok: false, problems, topics: {}, messages: 0, start: null, end: null, rosbag2: null };
  if (ir.header.profile !== "ros2") problem(`profile ${JSON.stringify(ir.header.profile)}, want "ros2"`);
  const formats = new Set();
  for (const ch of ir.channelsById.values()) {
    const sc = ir.schemasById.get(ch.schemaId);
    formats.add(ch.messageEncoding);
    if (ch.messageEncoding !== "cdr") problem(`${ch.topic}: message encoding ${ch.messageEncoding}, want cdr`);
    if (!sc) {
      problem(`${ch.topic}: no schema`);
      continue;
    }
    if (sc.encoding !== "ros2msg" && sc.encoding !== "ros2idl") problem(`${ch.topic}: schema encoding ${sc.encoding}, want ros2msg or ros2idl`);
    if (!/^[A-Za-z][A-Za-z0-9_]*\/msg\/[A-Z][A-Za-z0-9]*$/.test(sc.name)) problem(`${ch.topic}: schema name ${sc.name} is not pkg/msg/Type`);
    const t = { type: sc.name, count: 0 };
    out.topics[ch.topic] = t;
    const qos = ch.metadata.get("offered_qos_profiles");
    if (qos === undefined) {
      problem(`${ch.topic}: no offered_qos_profiles metadata`);
    } else {
      try {
        Object.assign(t, checkQoS(qos));
      } catch (e) {
        problem(`${ch.topic}: offered_qos_profiles: ${e.message}`);
      }
      // Latched topics: tf2's static transforms and robot_state_publisher's
      // robot description (std_msgs/msg/String on [NS]/robot_description).
      const latched = ch.topic === "/tf_static" || (sc.name === "std_msgs/msg/String" && /\/robot_description$/.test(ch.topic));
      const want = latched ? "transient_local" : "volatile";
      if (t.durability !== undefined && t.durability !== want) problem(`${ch.topic}: durability ${t.durability}, want ${want}`);
      if (t.reliability !== undefined && t.reliability !== "reliable") problem(`${ch.topic}: reliability ${t.reliability}, want reliable`);
    }
  }
  if (formats.size > 1) problem(`topics with different serialization formats: ${[...formats].join(", ")} (rosbag2 refuses the bag)`);

  // Every message, in file order through the index, decoded.
  let start = null, end = null;
  const perChannel = new Map();
  for await (const m of ir.readMessages({ validateCrcs: true })) {
    const ch = ir.channelsById.get(m.channelId);
    const sc = ir.schemasById.get(ch.schemaId);
    try {
      const d = decode(new TextDecoder().decode(sc.data), m.data);
      if (d.trailing || d.consumed !== m.data.length) throw new Error(`decoded ${d.consumed} of ${m.data.length} bytes`);
    } catch (e) {
      problem(`${ch.topic} message ${m.sequence} (${sc.name}): ${e.message}`);
    }
    out.messages++;
    out.topics[ch.topic].count++;
    perChannel.set(m.channelId, (perChannel.get(m.channelId) || 0) + 1);
    start = start === null || m.logTime < start ? m.logTime : start;
    end = end === null || m.logTime > end ? m.logTime : end;
  }
  out.start = start === null ? null : String(start);
  out.end = end === null ? null : String(end);

  // The statistics ros2 bag info and the player's clock read.
  const st = ir.statistics;
  if (!st) {
    problem("no Statistics record in the summary");
  } else {
    if (Number(st.messageCount) !== out.messages) problem(`statistics: ${st.messageCount} messages, the file has ${out.messages}`);
    if (start !== null && (st.messageStartTime !== start || st.messageEndTime !== end)) {
      problem(`statistics: start ${st.messageStartTime} end ${st.messageEndTime} ns, the messages' log times run ${start} to ${end}`);
    }
    for (const [id, n] of perChannel) {
      if (Number(st.channelMessageCounts.get(id) || 0) !== n) problem(`statistics: channel ${id} count ${st.channelMessageCounts.get(id)}, the file has ${n}`);
    }
  }

  // rosbag2's metadata record, where present: every field its decoder requires.
  const stream = new McapStreamReader({ decompressHandlers, validateCrcs: true });
  stream.append(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  for (let rec; (rec = stream.nextRecord()); ) {
    if (rec.type !== "Metadata" || rec.name !== "rosbag2") continue;
    try {
      const y = parseYAML(rec.metadata.get("serialized_metadata") || "");
      for (const k of ["version", "storage_identifier", "duration", "starting_time", "message_count", "topics_with_message_count",
        "compression_format", "compression_mode", "relative_file_paths", "files", "custom_data", "ros_distro"]) {
        if (!(k in y)) throw new Error(`no ${k}`);
      }
      if (y.storage_identifier !== "mcap") throw new Error(`storage_identifier ${y.storage_identifier}`);
      if (y.message_count !== out.messages) throw new Error(`message_count ${y.message_count}, the file has ${out.messages}`);
      if (start !== null && (String(y.starting_time.nanoseconds_since_epoch) !== String(start) ||
          String(y.duration.nanoseconds) !== String(end - start))) {
        throw new Error(`starting_time ${y.starting_time.nanoseconds_since_epoch} duration ${y.duration.nanoseconds}`);
      }
      for (const t of y.topics_with_message_count) {
        const tm = t.topic_metadata;
        const have = out.topics[tm.name];
        if (!have || have.type !== tm.type || have.count !== t.message_count || tm.serialization_format !== "cdr" ||
            typeof tm.type_description_hash !== "string") {
          throw new Error(`topic ${tm.name}: ${JSON.stringify(t)}`);
        }
        const q = checkQoS(yamlOf(tm.offered_qos_profiles));
        if (q.durability !== have.durability) throw new Error(`topic ${tm.name}: durability ${q.durability} in rosbag2 metadata, ${have.durability} on the channel`);
      }
      if (y.topics_with_message_count.length !== Object.keys(out.topics).length) throw new Error("topics differ from the channels");
      out.rosbag2 = { version: y.version, topics: y.topics_with_message_count.length };
    } catch (e) {
      problem(`rosbag2 metadata: ${e.message}`);
    }
  }
  out.ok = problems.length === 0;
  process.stdout.write(JSON.stringify(out));
  process.exit(out.ok ? 0 : 1);
}

// yamlOf writes a parsed profile list back as block YAML for checkQoS.
function yamlOf(list) {
  if (!Array.isArray(list)) throw new Error("offered_qos_profiles: not a list");
  let s = "";
  for (const p of list) {
    let first = true;
    for (const [k, v] of Object.entries(p)) {
      const lead = first ? "- " : "  ";
      first = false;
      if (v && typeof v === "object") {
        s += `${lead}${k}:\n`;
        for (const [k2, v2] of Object.entries(v)) s += `    ${k2}: ${v2}\n`;
      } else {
        s += `${lead}${k}: ${v}\n`;
      }
    }
  }
  return s;
}

main().catch((e) => {
  console.error(e.stack || String(e));
  process.exit(1);
});
