// Type-checks every ```ts block of README.md and docs/*.md against lib/, so the examples cannot drift from the
// API. Each block compiles as a module of its own, with the repository's tsconfig (`nestjs-lock` is lib/index.ts).
// Conventions for writers:
// - Imports may be left out: a name the block uses but does not declare is imported from nestjs-lock (any public
//   export), nestjs-lock/store (what a store implements), nestjs-lock/postgres (the PostgreSQL helpers),
//   @nestjs/common (any export), or the packages listed in FRAMEWORK_NAMES below.
// - `<!-- docs:check ... -->` on the lines right above a block adds hidden code before it: the reader's own
//   classes and values the example relies on (`declare const locks: LockService;`).
// - A block fenced as ```ts ignore is not checked (a deliberate fragment; keep them rare).
// It also checks that every relative link leads to a file, and to a heading of it when it names one.
// Usage: node scripts/check-docs.js [markdown files]   (default: README.md and docs/*.md)
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

const root = resolve(dirname(new URL(import.meta.url).pathname), '..');

/** Names imported when a block uses them, by package; nestjs-lock and @nestjs/common are read from their typings. */
const FRAMEWORK_NAMES = {
  '@nestjs/core': ['APP_INTERCEPTOR', 'NestFactory', 'RouterModule'],
  '@nestjs/schedule': ['Cron', 'CronExpression', 'Interval', 'Timeout', 'ScheduleModule'],
  '@nestjs/testing': ['Test', 'TestingModule'],
  '@nestjs/graphql': ['Args', 'Context', 'Mutation', 'Query', 'ResolveField', 'Resolver'],
  '@nestjs/websockets': ['ConnectedSocket', 'MessageBody', 'SubscribeMessage', 'WebSocketGateway', 'WsException'],
  '@nestjs/microservices': ['ClientProxy', 'EventPattern', 'MessagePattern', 'Payload', 'RpcException'],
  '@nestjs/bullmq': ['Processor', 'WorkerHost'],
  bullmq: ['Job'],
  '@nestjs/event-emitter': ['EventEmitterModule', 'OnEvent'],
  '@nestjs/terminus': ['HealthCheck', 'HealthCheckService', 'TerminusModule'],
  'nestjs-lock/terminus': ['LockHealthIndicator'],
  'nestjs-lock/admin': ['LockAdminModule'],
  ioredis: ['Cluster', 'Redis'],
  etcd3: ['Etcd3'],
  rxjs: ['lastValueFrom'],
  '@nestjs/config': ['ConfigModule', 'ConfigService'],
  '@nestjs/passport': ['AuthGuard'],
};

/**
 * Typings for packages the examples name but this repository does not install, with the real packages'
 * signatures for what the examples use. Declared only while the package cannot be resolved.
 */
const ABSENT_PACKAGES = {
  '@nestjs/config': `
    import type { DynamicModule } from '@nestjs/common';
    export class ConfigModule { static forRoot(options?: { isGlobal?: boolean }): DynamicModule; }
    export class ConfigService {
      get<T = any>(propertyPath: string): T | undefined;
      getOrThrow<T = any>(propertyPath: string): T;
    }`,
  '@nestjs/passport': `
    import type { CanActivate, Type } from '@nestjs/common';
    export function AuthGuard(type?: string | string[]): Type<CanActivate>;`,
};

/** The markdown files to check: the arguments, else README.md and every page of docs/. */
function markdownFiles() {
  const given = process.argv.slice(2);
  if (given.length > 0) return given.map((file) => resolve(file));
  const docs = join(root, 'docs');
  const pages = existsSync(docs) ? readdirSync(docs).filter((name) => name.endsWith('.md')) : [];
  return [join(root, 'README.md'), ...pages.sort().map((name) => join(docs, name))];
}

/**
 * The ```ts blocks of one markdown file: their code, the line of their opening fence (1-based), and the hidden
 * code of a `<!-- docs:check -->` comment right above them.
 */
function blocksOf(file) {
  const lines = readFileSync(file, 'utf8').split('\n');
  const blocks = [];
  const problems = [];
  let context;
  for (let i = 0; i < lines.length; i++) {
    const comment = /^\s*<!--\s*docs:check\b(.*)$/.exec(lines[i]);
    if (comment) {
      const start = i;
      const body = [comment[1]];
      while (!body[body.length - 1].includes('-->') && i + 1 < lines.length) body.push(lines[++i]);
      body[body.length - 1] = body[body.length - 1].replace(/-->.*$/, '');
      context = { line: start + 1, code: body };
      continue;
    }
    const fence = /^(\s*)(`{3,}|~{3,})\s*([\w-]*)(.*)$/.exec(lines[i]);
    if (!fence) {
      if (context && lines[i].trim() !== '') {
        problems.push(
          `${relative(root, file)}:${context.line}: a docs:check comment must be right above a \`\`\`ts block`,
        );
        context = undefined;
      }
      continue;
    }
    const [, indent, marker, language, info] = fence;
    const opening = i;
    const code = [];
    while (++i < lines.length && !new RegExp(`^\\s*${marker[0]}{${marker.length},}\\s*$`).test(lines[i])) {
      code.push(lines[i].startsWith(indent) ? lines[i].slice(indent.length) : lines[i]);
    }
    const checked = (language === 'ts' || language === 'typescript') && !/\bignore\b/.test(info);
    if (checked) blocks.push({ file, line: opening + 1, code, context });
    else if (context)
      problems.push(`${relative(root, file)}:${context.line}: a docs:check comment above an unchecked block`);
    context = undefined;
  }
  return { blocks, problems };
}

/** The lines of a markdown file outside its fenced code blocks, with their 1-based numbers. */
function proseLines(file) {
  const lines = [];
  let fence;
  readFileSync(file, 'utf8')
    .split('\n')
    .forEach((line, index) => {
      const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
      if (marker && (!fence || (marker[0] === fence[0] && marker.length >= fence.length))) {
        fence = fence ? undefined : marker;
      } else if (!fence) {
        lines.push({ text: line, number: index + 1 });
      }
    });
  return lines;
}

/** The anchors GitHub gives the headings of a markdown file (lower case, punctuation dropped, `-` for spaces). */
function headingAnchors(file) {
  const anchors = new Set();
  for (const { text } of proseLines(file)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(text)?.[1];
    if (heading === undefined) continue;
    const base = heading
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    let anchor = base;
    for (let n = 1; anchors.has(anchor); n++) anchor = `${base}-${n}`;
    anchors.add(anchor);
  }
  return anchors;
}

/** The relative links of a markdown file that lead to no file, or to no heading of it. */
function brokenLinks(file) {
  const broken = [];
  for (const { text, number } of proseLines(file)) {
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/i.test(target)) continue;
      const [path, anchor] = target.split('#');
      const linked = path ? resolve(dirname(file), path) : file;
      const where = `${relative(root, file)}:${number}`;
      if (!existsSync(linked)) broken.push(`${where}: the link ${target} leads to no file`);
      else if (anchor && linked.endsWith('.md') && !headingAnchors(linked).has(anchor)) {
        broken.push(`${where}: the link ${target} names no heading of ${relative(root, linked)}`);
      }
    }
  }
  return broken;
}

/** The top-level names a piece of code declares or imports itself. */
function declaredNames(code) {
  const source = ts.createSourceFile('block.ts', code, ts.ScriptTarget.Latest, false);
  const names = new Set();
  const addBinding = (name) => {
    if (ts.isIdentifier(name)) names.add(name.text);
    else for (const element of name.elements) if (!ts.isOmittedExpression(element)) addBinding(element.name);
  };
  for (const statement of source.statements) {
    if (ts.isImportDeclaration(statement) && statement.importClause) {
      const clause = statement.importClause;
      if (clause.name) names.add(clause.name.text);
      const bindings = clause.namedBindings;
      if (bindings && ts.isNamespaceImport(bindings)) names.add(bindings.name.text);
      if (bindings && ts.isNamedImports(bindings))
        for (const element of bindings.elements) names.add(element.name.text);
    } else if (ts.isVariableStatement(statement)) {
      for (const declaration of statement.declarationList.declarations) addBinding(declaration.name);
    } else if (statement.name && ts.isIdentifier(statement.name)) {
      names.add(statement.name.text);
    }
  }
  return names;
}

/** Every identifier a piece of code mentions, but property names after a dot. */
function mentionedNames(code) {
  const source = ts.createSourceFile('block.ts', code, ts.ScriptTarget.Latest, true);
  const names = new Set();
  const visit = (node) => {
    if (ts.isIdentifier(node) && !(ts.isPropertyAccessExpression(node.parent) && node.parent.name === node)) {
      names.add(node.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return names;
}

const parsedConfig = ts.getParsedCommandLineOfConfigFile(
  join(root, 'tsconfig.json'),
  {},
  {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
      throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
    },
  },
);
const options = { ...parsedConfig.options, noEmit: true, declaration: false, declarationMap: false, sourceMap: false };

// the blocks live in memory, as files of a folder of the repository (so node_modules and paths resolve)
const virtualDir = join(root, '.docs-check');
const virtualFiles = new Map();
const host = ts.createCompilerHost(options);
const sourceCache = new Map();
const baseGetSourceFile = host.getSourceFile.bind(host);
Object.assign(host, {
  fileExists: (file) => virtualFiles.has(file) || ts.sys.fileExists(file),
  readFile: (file) => virtualFiles.get(file) ?? ts.sys.readFile(file),
  getSourceFile: (file, language, onError) => {
    if (virtualFiles.has(file)) return ts.createSourceFile(file, virtualFiles.get(file), language, true);
    if (!sourceCache.has(file)) sourceCache.set(file, baseGetSourceFile(file, language, onError));
    return sourceCache.get(file);
  },
});

/** The exported names of each package whose exports are read from its typings. */
function exportsOfPackages(packages) {
  const probe = join(virtualDir, 'exports-probe.ts');
  virtualFiles.set(probe, packages.map((name, i) => `import * as p${i} from '${name}';`).join('\n'));
  const program = ts.createProgram([probe], options, host);
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(probe);
  const found = new Map();
  source.statements.forEach((statement, i) => {
    const symbol = checker.getSymbolAtLocation(statement.moduleSpecifier);
    if (!symbol) throw new Error(`check-docs: cannot resolve ${packages[i]}`);
    found.set(
      packages[i],
      checker.getExportsOfModule(symbol).map((exported) => exported.name),
    );
  });
  virtualFiles.delete(probe);
  return found;
}

/** Where each auto-imported name comes from; the first package to claim a name keeps it. */
function importTable() {
  const table = new Map();
  const claim = (pkg, names) => names.forEach((name) => table.has(name) || table.set(name, pkg));
  for (const [pkg, names] of exportsOfPackages([
    'nestjs-lock',
    'nestjs-lock/store',
    'nestjs-lock/postgres',
    '@nestjs/common',
  ]))
    claim(pkg, names);
  for (const [pkg, names] of Object.entries(FRAMEWORK_NAMES)) claim(pkg, names);
  return table;
}

/** The ambient declarations of the absent packages that the examples import. */
function absentPackageStubs() {
  return Object.entries(ABSENT_PACKAGES)
    .filter(([name]) => !ts.resolveModuleName(name, join(virtualDir, 'probe.ts'), options, host).resolvedModule)
    .map(([name, body]) => `declare module '${name}' {${body}\n}`)
    .join('\n');
}

const files = markdownFiles();
const problems = [];
const blocks = [];
for (const file of files) {
  const found = blocksOf(file);
  blocks.push(...found.blocks);
  problems.push(...found.problems, ...brokenLinks(file));
}

const table = importTable();
const stubs = absentPackageStubs();
if (stubs) virtualFiles.set(join(virtualDir, 'absent-packages.d.ts'), stubs);

// each virtual file: imports, then the hidden context, then the block; `segments` maps its lines back
for (const block of blocks) {
  const contextCode = block.context?.code.join('\n') ?? '';
  const ownCode = `${contextCode}\n${block.code.join('\n')}`;
  const declared = declaredNames(ownCode);
  const byPackage = new Map();
  for (const name of mentionedNames(ownCode)) {
    const pkg = table.get(name);
    if (!pkg || declared.has(name)) continue;
    if (!byPackage.has(pkg)) byPackage.set(pkg, []);
    byPackage.get(pkg).push(name);
  }
  const imports = [...byPackage].map(([pkg, names]) => `import { ${names.sort().join(', ')} } from '${pkg}';`);
  const contextLines = block.context?.code ?? [];
  block.segments = [
    { from: 0, count: imports.length, line: () => block.line },
    { from: imports.length, count: contextLines.length, line: (offset) => block.context.line + offset },
    { from: imports.length + contextLines.length, count: block.code.length, line: (offset) => block.line + 1 + offset },
  ];
  const name = `${relative(root, block.file).replace(/[/\\]/g, '_')}-${block.line}.ts`;
  block.path = join(virtualDir, name);
  virtualFiles.set(block.path, [...imports, ...contextLines, ...block.code, 'export {};'].join('\n'));
}

// only the blocks' own diagnostics: lib/ itself is the type check's business
const program = ts.createProgram([...virtualFiles.keys()], options, host);
const blockOf = new Map(blocks.map((block) => [block.path, block]));
const diagnostics = [
  ...program.getOptionsDiagnostics(),
  ...program.getGlobalDiagnostics(),
  ...[...virtualFiles.keys()].flatMap((path) => {
    const source = program.getSourceFile(path);
    return [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)];
  }),
];
for (const diagnostic of diagnostics) {
  const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n  ');
  const block = diagnostic.file && blockOf.get(diagnostic.file.fileName);
  if (!block) {
    const where = diagnostic.file ? relative(root, diagnostic.file.fileName) : 'tsconfig';
    problems.push(`${where}: TS${diagnostic.code}: ${message}`);
    continue;
  }
  const { line, character } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start ?? 0);
  const segment = block.segments.find((part) => line >= part.from && line < part.from + part.count);
  const at = segment ? segment.line(line - segment.from) : block.line;
  problems.push(`${relative(root, block.file)}:${at}:${character + 1}: TS${diagnostic.code}: ${message}`);
}

for (const problem of problems) console.log(problem);
const outcome = problems.length === 0 ? 'all compile, every link leads somewhere' : `${problems.length} found above`;
console.log(`${blocks.length} TypeScript blocks in ${files.length} markdown files: ${outcome}`);
process.exit(problems.length > 0 ? 1 : 0);
