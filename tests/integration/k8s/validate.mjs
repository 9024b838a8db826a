// validate.mjs - checks Kubernetes objects against Kubernetes' OpenAPI schemas, as
// tests/integration/test_deploy.py hands them over (JSON on standard input:
// [{"file": ..., "doc": {...}}, ...]; YAML is parsed on the Python side).
//
// Two checks per object:
// - schema: the kubernetes-models package's validators, generated with ajv from
//   Kubernetes' OpenAPI definitions (types, enums, required fields, quantities);
// - strict: no field the API does not know (what `kubeconform -strict` adds; the
//   OpenAPI schemas allow unknown fields, the API server drops them silently),
//   walking the package's type declarations (.d.ts) from the object's kind down.
// Prints one line per object and exits 1 when any object fails.
import { createRequire } from "node:module";
import fs from "node:fs";
import path from "node:path";

const require = createRequire(import.meta.url);
const modelsRoot = path.dirname(require.resolve("kubernetes-models/package.json"));

function modelFile(apiVersion, kind) {
  // "apps/v1" -> apps/v1/Kind, "v1" -> v1/Kind
  return path.join(modelsRoot, apiVersion, kind);
}

// --- strict: field names from the .d.ts interfaces ------------------------------
const declCache = new Map();
function declarations(file) {
  if (declCache.has(file)) return declCache.get(file);
  const text = fs.readFileSync(file + ".d.ts", "utf8");
  const imports = new Map();
  for (const m of text.matchAll(/import \{ ([^}]+) \} from "([^"]+)";/g)) {
    for (const name of m[1].split(",").map((s) => s.trim())) imports.set(name, m[2]);
  }
  const aliases = new Map();
  for (const m of text.matchAll(/export \{ ([^}]+) \};/g)) {
    for (const part of m[1].split(",")) {
      const [from, , to] = part.trim().split(/\s+/);
      if (to) aliases.set(to, from);
    }
  }
  const interfaces = new Map();
  for (const m of text.matchAll(/export interface (\w+)(?: extends [\w, ]+)? \{\n([\s\S]*?)\n\}/g)) {
    const props = new Map();
    let depth = 0;
    for (const line of m[2].split("\n")) {
      const t = line.trim();
      if (depth === 0) {
        const p = t.match(/^"([^"]+)"\??: (.*?);?$/);
        if (p) props.set(p[1], p[2]);
      }
      depth += (t.match(/\{/g) || []).length - (t.match(/\}/g) || []).length;
    }
    if (/extends TypeMeta/.test(m[0])) {
      props.set("apiVersion", props.get("apiVersion") || "string");
      props.set("kind", props.get("kind") || "string");
    }
    interfaces.set(m[1], props);
  }
  const d = { imports, aliases, interfaces, file };
  declCache.set(file, d);
  return d;
}

function resolveType(decl, typeName) {
  // a type named in decl's file: its own interface, or an import
  const local = decl.aliases.get(typeName) || typeName;
  if (decl.interfaces.has(local)) return { decl, name: local };
  const from = decl.imports.get(typeName);
  if (!from) return null;
  let file;
  if (from.startsWith(".")) file = path.resolve(path.dirname(decl.file), from);
  else {
    const [scope, pkg, ...rest] = from.split("/");
    const root = path.dirname(require.resolve(`${scope}/${pkg}/package.json`));
    file = path.join(root, ...rest);
  }
  const d = declarations(file);
  const name = d.aliases.get(typeName) || typeName;
  return d.interfaces.has(name) ? { decl: d, name } : null;
}

function strict(value, decl, name, where, errors) {
  const props = decl.interfaces.get(name);
  if (!props || value === null || typeof value !== "object" || Array.isArray(value)) return;
  for (const [key, v] of Object.entries(value)) {
    if (!props.has(key)) {
      errors.push(`${where}/${key}: unknown field (${name.replace(/^I(IoK8s)?/, "")} has ${[...props.keys()].join(", ")})`);
      continue;
    }
    const type = props.get(key);
    let m;
    if ((m = type.match(/^Array<(I\w+)>$/))) {
      const t = resolveType(decl, m[1]);
      if (t && Array.isArray(v)) v.forEach((x, i) => strict(x, t.decl, t.name, `${where}/${key}/${i}`, errors));
    } else if ((m = type.match(/^(I\w+)$/))) {
      const t = resolveType(decl, m[1]);
      if (t) strict(v, t.decl, t.name, `${where}/${key}`, errors);
    }
    // maps ({ [key: string]: ... }), primitives and unions: nothing to walk
  }
}

// --- main -------------------------------------------------------------------------
const input = JSON.parse(fs.readFileSync(0, "utf8"));
let failed = 0;
for (const { file, doc } of input) {
  const what = `${file}: ${doc.kind} ${doc.metadata?.name ?? "?"}`;
  const errors = [];
  let Model;
  try {
    Model = require(modelFile(doc.apiVersion, doc.kind))[doc.kind];
  } catch (e) {
    errors.push(`no schema for apiVersion ${doc.apiVersion} kind ${doc.kind}`);
  }
  if (Model) {
    try {
      new Model(doc).validate();
    } catch (e) {
      errors.push(`schema: ${e.message}`);
    }
    const d = declarations(modelFile(doc.apiVersion, doc.kind));
    strict(doc, d, `I${doc.kind}`, "", errors);
  }
  if (errors.length) {
    failed++;
    console.log(`INVALID ${what}: ${errors.join("; ")}`);
  } else {
    console.log(`valid ${what}`);
  }
}
process.exit(failed ? 1 : 0);
