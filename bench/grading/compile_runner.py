"""The `compile` check's runner, as JavaScript text the host puts into the grader.

A Python module rather than a .js file so the harness wheel (and so its SHA-256 in every
record) covers it: the runner decides what a compile check observed, so results graded by
two different runners must never look comparable.
"""

SOURCE = r'''// The `compile` check's runner, inside the grader: typecheck a submission with the
// TypeScript compiler API and print one JSON object. Nothing of the submission runs: the
// compiler only reads it. Harness code (from the harness wheel, put here by the host),
// never the workspace's: the submission's own tsconfig, package.json and scripts are
// not even copied in.
//
// Besides the compiler's diagnostics it refuses what would let a submission typecheck
// against declarations of its own making instead of the subject's: an ambient or
// augmenting `declare module "..."`, `declare global`, triple-slash references, and the
// comment directives that switch checking off (@ts-ignore, @ts-expect-error, @ts-nocheck).
"use strict";
const fs = require("fs");
const path = require("path");
const ts = require("typescript");

const job = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const root = path.dirname(process.argv[2]);
const src = path.join(root, "src");
const DIRECTIVE = /@ts-(ignore|expect-error|nocheck)\b/g;

function where(file, pos) {
  const { line, character } = file.getLineAndCharacterOfPosition(pos);
  return { file: path.relative(src, file.fileName), line: line + 1, column: character + 1 };
}

function refusals(file) {
  const found = [];
  const refuse = (node, code, message) => found.push({ code, ...where(file, node.getStart(file)), message });
  for (const ref of [...file.referencedFiles, ...file.typeReferenceDirectives, ...file.libReferenceDirectives]) {
    found.push({ code: "bench-reference", ...where(file, ref.pos),
                 message: `triple-slash reference '${ref.fileName}': a submission uses the subject's declarations as published` });
  }
  for (const match of file.text.matchAll(DIRECTIVE)) {
    found.push({ code: "bench-directive", ...where(file, match.index),
                 message: `'@ts-${match[1]}' switches type checking off; a submission must typecheck as written` });
  }
  const visit = (node) => {
    if (ts.isModuleDeclaration(node)) {
      if (node.flags & ts.NodeFlags.GlobalAugmentation) {
        refuse(node, "bench-declare-global", "'declare global' changes declarations outside the submission");
      } else if (ts.isStringLiteral(node.name)) {
        refuse(node, "bench-declare-module",
               `'declare module "${node.name.text}"' declares or augments a module's types; the subject's own declarations decide`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

function diagnostic(d) {
  const message = ts.flattenDiagnosticMessageText(d.messageText, "\n");
  const base = { code: `TS${d.code}`, category: ts.DiagnosticCategory[d.category].toLowerCase(), message };
  if (!d.file) return { ...base, file: null, line: null, column: null };
  const at = where(d.file, d.start || 0);
  // A diagnostic in the subject's declarations is named by its package path, never a temp path.
  if (at.file.startsWith("..")) at.file = path.relative(root, d.file.fileName);
  return { ...base, ...at };
}

const files = job.files.map((name) => path.join(src, name));
const options = { ...job.compilerOptions, noEmit: true };
const parsed = ts.convertCompilerOptionsFromJson(options, root);
const program = ts.createProgram(files, parsed.options);
const own = program.getSourceFiles().filter((f) => files.includes(f.fileName));
const refused = own.flatMap(refusals);
const compiler = ts.getPreEmitDiagnostics(program).map(diagnostic);
const imports = own.flatMap((f) => ts.preProcessFile(f.text, true, true).importedFiles
  .map((i) => ({ file: path.relative(src, f.fileName), module: i.fileName })));
// At most SHOWN diagnostics travel back (a submission with a million errors must not
// flood the check's output budget); `total` says how many there were.
const SHOWN = 200;
const all = [...parsed.errors.map(diagnostic), ...refused, ...compiler];
process.stdout.write(JSON.stringify({
  typescript: ts.version, total: all.length, diagnostics: all.slice(0, SHOWN), imports: imports.slice(0, 1000),
}) + "\n");
'''
