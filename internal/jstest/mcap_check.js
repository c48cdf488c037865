// Usage: node mcap_check.js FILE.mcap [TOPIC ...]
// Reads a recording with @mcap/core (the stream reader, which also reads a
// file cut short, and for a complete file the indexed reader through its
// summary), decompresses chunks with @foxglove/wasm-zstd / wasm-lz4 and
// decodes every message: cdr with @foxglove/rosmsg2-serialization from its
// ros2msg schema, json with JSON.parse. Prints one JSON object; byte arrays
// longer than 256 bytes are replaced by {sha256, length} except on the
// TOPICs named. Exits 1 naming the first message that does not decode.
"use strict";
const fs = require("fs");
const crypto = require("crypto");
const { McapStreamReader, McapIndexedReader } = require("@mcap/core");
const zstd = require("@foxglove/wasm-zstd");
const lz4 = require("@foxglove/wasm-lz4");
const { decode } = require("./ros2_common");

function shorten(v, full) {
  if (v && typeof v === "object") {
    if (typeof v.base64 === "string" && !full) {
      const b = Buffer.from(v.base64, "base64");
      if (b.length > 256) {
        return { sha256: crypto.createHash("sha256").update(b).digest("hex"), length: b.length };
      }
      return v;
    }
    if (Array.isArray(v)) {
      return v.map((x) => shorten(x, full));
    }
    const o = {};
    for (const [k, x] of Object.entries(v)) {
      o[k] = shorten(x, full);
    }
    return o;
  }
  return v;
}

async function main() {
  await zstd.isLoaded;
  await lz4.isLoaded;
  const decompressHandlers = {
    zstd: (buf, size) => zstd.decompress(buf, Number(size)),
    lz4: (buf, size) => lz4(buf, Number(size)),
  };
  const file = process.argv[2];
  const fullTopics = new Set(process.argv.slice(3));
  const bytes = fs.readFileSync(file);
  const reader = new McapStreamReader({ decompressHandlers, validateCrcs: true });
  reader.append(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  const schemas = new Map();
  const channels = new Map();
  const out = { complete: false, profile: "", counts: {}, attachments: [], metadata: {}, messages: [] };
  let rec;
  for (;;) {
    try {
      rec = reader.nextRecord();
    } catch (e) {
      out.error = e.message;
      break;
    }
    if (!rec) {
      break;
    }
    switch (rec.type) {
      case "Header":
        out.profile = rec.profile;
        break;
      case "Schema":
        schemas.set(rec.id, rec);
        break;
      case "Channel":
        channels.set(rec.id, rec);
        break;
      case "Metadata":
        out.metadata[rec.name] = Object.fromEntries(rec.metadata);
        break;
      case "Attachment":
        out.attachments.push({ name: rec.name, mediaType: rec.mediaType, length: rec.data.length,
          sha256: crypto.createHash("sha256").update(rec.data).digest("hex") });
        break;
      case "Footer":
        out.complete = true;
        break;
      case "Message": {
        const ch = channels.get(rec.channelId);
        const schema = schemas.get(ch.schemaId);
        let msg;
        try {
          if (ch.messageEncoding === "cdr") {
            if (schema.encoding !== "ros2msg") {
              throw new Error(`schema encoding ${schema.encoding}`);
            }
            const d = decode(new TextDecoder().decode(schema.data), rec.data);
            if (d.trailing || d.consumed !== rec.data.length) {
              throw new Error(`decoded ${d.consumed} of ${rec.data.length} bytes`);
            }
            msg = d.msg;
          } else if (ch.messageEncoding === "json") {
            msg = JSON.parse(new TextDecoder().decode(rec.data));
          } else {
            throw new Error(`message encoding ${ch.messageEncoding}`);
          }
        } catch (e) {
          console.error(`${ch.topic} message ${rec.sequence} (${schema && schema.name}): ${e.message}`);
          process.exit(1);
        }
        out.counts[ch.topic] = (out.counts[ch.topic] || 0) + 1;
        out.messages.push({ topic: ch.topic, schema: schema.name, logTime: String(rec.logTime),
          msg: shorten(msg, fullTopics.has(ch.topic)) });
        break;
      }
    }
  }
  if (out.complete) {
    const readable = {
      size: async () => BigInt(bytes.length),
      read: async (offset, length) => new Uint8Array(bytes.buffer, bytes.byteOffset + Number(offset), Number(length)),
    };
    const ir = await McapIndexedReader.Initialize({ readable, decompressHandlers });
    out.indexed = { counts: {}, chunks: ir.chunkIndexes.length, attachments: ir.attachmentIndexes.length,
      messageCount: Number(ir.statistics.messageCount) };
    for await (const m of ir.readMessages({ validateCrcs: true })) {
      const topic = ir.channelsById.get(m.channelId).topic;
      out.indexed.counts[topic] = (out.indexed.counts[topic] || 0) + 1;
    }
  }
  process.stdout.write(JSON.stringify(out));
}

main().catch((e) => {
  console.error(e.stack || String(e));
  process.exit(1);
});
