// Validates glTF files with the Khronos glTF validator (npm gltf-validator)
// and prints, per file, one JSON line: the file, the numbers of errors,
// warnings, infos and hints, and every message above hint level. Exits 1
// where a file cannot be read or validated. Usage: node gltf_validate.js FILE...
const fs = require("fs");
const path = require("path");
const validator = require("gltf-validator");

async function main(files) {
  for (const file of files) {
    const bytes = new Uint8Array(fs.readFileSync(file));
    const report = await validator.validateBytes(bytes, {
      uri: path.basename(file),
      maxIssues: 0,
      // simvis writes self-contained files: any external resource is an error.
      externalResourceFunction: (uri) => Promise.reject(new Error("external resource " + uri)),
    });
    const i = report.issues;
    console.log(JSON.stringify({
      file,
      errors: i.numErrors,
      warnings: i.numWarnings,
      infos: i.numInfos,
      hints: i.numHints,
      messages: i.messages.filter((m) => m.severity < 2).map((m) => `${m.code} ${m.pointer || ""}: ${m.message}`),
      extensions: report.info ? report.info.extensionsUsed || [] : [],
    }));
  }
}

main(process.argv.slice(2)).catch((e) => {
  console.error(String(e && e.stack || e));
  process.exit(1);
});
