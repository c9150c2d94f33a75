// Checks the structure of lib/: no import cycle between files (type imports included), and no two folders
// importing each other except through lib/interfaces/. Prints what it finds; exits 1 when anything is found.
// Usage: node scripts/check-structure.js [--verbose]
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

const root = resolve(dirname(new URL(import.meta.url).pathname), '..');
const lib = join(root, 'lib');
const verbose = process.argv.includes('--verbose');

/** Every .ts file of lib/ but specs and declaration files. */
function sourceFiles(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') && !name.endsWith('.spec.ts') && !name.endsWith('.d.ts') ? [path] : [];
  });
}

/** The lib/ files `file` imports or re-exports, types included, by their paths. */
function importsOf(file) {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false);
  const targets = [];
  const visit = (node) => {
    const specifier =
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier
        ? node.moduleSpecifier.text
        : ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)
          ? node.argument.literal.text
          : undefined;
    if (specifier?.startsWith('.')) {
      const target = resolve(dirname(file), specifier.replace(/\.js$/, '.ts'));
      targets.push(target);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return targets;
}

const files = sourceFiles(lib);
const known = new Set(files);
const graph = new Map(files.map((file) => [file, importsOf(file).filter((target) => known.has(target))]));
const name = (file) => relative(lib, file);

// cycles between files: strongly connected components of more than one file (Tarjan), and self-imports
const cycles = [];
{
  let index = 0;
  const stack = [];
  const state = new Map();
  const connect = (file) => {
    const entry = { index, low: index, onStack: true };
    index++;
    state.set(file, entry);
    stack.push(file);
    for (const target of graph.get(file)) {
      if (!state.has(target)) {
        connect(target);
        entry.low = Math.min(entry.low, state.get(target).low);
      } else if (state.get(target).onStack) entry.low = Math.min(entry.low, state.get(target).index);
    }
    if (entry.low !== entry.index) return;
    const component = [];
    for (let member; member !== file;) {
      member = stack.pop();
      state.get(member).onStack = false;
      component.push(member);
    }
    if (component.length > 1 || graph.get(file).includes(file)) cycles.push(component.map(name).sort());
  };
  for (const file of files) if (!state.has(file)) connect(file);
}

// folder pairs: the folder of a file is its first level under lib/ (a file of lib/ itself is its own room),
// and for lib/stores/ its family (lib/stores/redis): each family is a plug-in of its own
function roomOf(file) {
  const parts = name(file).split('/');
  if (parts.length === 1) return parts[0];
  if (parts[0] === 'stores' && parts.length > 2) return `stores/${parts[1]}`;
  return parts[0];
}
const edges = new Map();
for (const [file, targets] of graph) {
  for (const target of targets) {
    const from = roomOf(file);
    const to = roomOf(target);
    if (from === to || to === 'interfaces') continue;
    const key = `${from} -> ${to}`;
    if (!edges.has(key)) edges.set(key, []);
    edges.get(key).push(`${name(file)} -> ${name(target)}`);
  }
}
const mutual = [];
for (const key of edges.keys()) {
  const [from, to] = key.split(' -> ');
  if (from < to && edges.has(`${to} -> ${from}`)) mutual.push([from, to]);
}

for (const cycle of cycles) console.log(`import cycle of ${cycle.length} files: ${cycle.join(', ')}`);
for (const [a, b] of mutual) {
  console.log(`folders importing each other: ${a} <-> ${b}`);
  if (verbose)
    for (const edge of [...edges.get(`${a} -> ${b}`), ...edges.get(`${b} -> ${a}`)]) console.log(`  ${edge}`);
}
console.log(
  `${files.length} files of lib/: ${cycles.length} import cycles, ${mutual.length} folder pairs importing each other`,
);
process.exit(cycles.length + mutual.length > 0 ? 1 : 0);
