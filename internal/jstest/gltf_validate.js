// Validates glTF files with the Khronos glTF Validator (npm gltf-validator)
// and prints one JSON object: per file, the numbers of errors, warnings and
// infos and up to 20 messages (code, severity 0 error .. 3 hint, pointer,
// message). Images are decoded and checked too.
//
// usage: node gltf_validate.js FILE...
'use strict';
const fs = require('fs');
const validator = require('gltf-validator');

async function main() {
  const out = {};
  for (const file of process.argv.slice(2)) {
    const bytes = new Uint8Array(fs.readFileSync(file));
    const report = await validator.validateBytes(bytes, {
      maxIssues: 1000,
      externalResourceFunction: () => Promise.reject(new Error('external resources are not expected')),
    });
    const issues = report.issues;
    out[file] = {
      errors: issues.numErrors,
      warnings: issues.numWarnings,
      infos: issues.numInfos,
      messages: issues.messages.slice(0, 20).map((m) => ({
        code: m.code, severity: m.severity, pointer: m.pointer || '', message: m.message,
      })),
    };
  }
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((err) => {
  process.stderr.write(String(err && err.stack || err) + '\n');
  process.exit(1);
});
