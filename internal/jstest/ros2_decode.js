// Usage: node ros2_decode.js IN.json
// IN.json: [{topic, type, schema, data (base64 CDR)}]. Prints one JSON array:
// per input {topic, type, msg, trailing, consumed, size}, or exits 1 naming the
// message that does not decode.
"use strict";
const fs = require("fs");
const { decode } = require("./ros2_common");

const items = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const out = [];
for (const it of items) {
  const bytes = Buffer.from(it.data, "base64");
  try {
    const d = decode(it.schema, new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength));
    out.push({ topic: it.topic, type: it.type, size: bytes.length, ...d });
  } catch (e) {
    console.error(`${it.topic} (${it.type}): ${e.message}`);
    process.exit(1);
  }
}
process.stdout.write(JSON.stringify(out));
