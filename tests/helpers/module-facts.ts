// What one TypeScript module imports, exports and reads, from its syntax alone (the compiler's
// parser, no type checking): factsOf(path, text, known) for the layers checker
// (tests/helpers/layers.ts), which holds the rules. Paths are repository-relative ("lib/ops/x.ts");
// `known` is every path of the tree, to resolve specifiers written without an extension.
//
// Contract: edges are every relative specifier of `import … from`, `import type`, `export … from`,
// `import x = require()`, `import()`, `require()` and the type `import("…").T` (packages and
// node:/bun: modules are not edges); comments and strings never are. `uses` says which exported
// names of each imported module this file reads, following the module value of import() and
// require() through await, casts, `.then(cb)`, destructuring (also of `Promise.all([import(…), …])`),
// namespaces (`ns.a`, `const { a } = ns`) and one local function level (`lazy(() => import(…))`);
// where the value goes somewhere it cannot follow, the whole module counts as read ("*").
import ts from "typescript";
import { posix } from "node:path";

export type Names = Set<string> | "*";

export interface Edge {
  target: string;
  line: number;
}

export interface Binding {
  target: string;
  /** the imported name; "*" for a namespace */
  name: string;
}

export interface ExportEntry {
  line: number;
  /** the local name to look for in the file; none for `export default <expression>` and re-exports */
  local?: string;
  /** `export { a as b } from "x"`: the module it comes from */
  from?: string;
}

export interface ModuleFacts {
  path: string;
  sf: ts.SourceFile;
  edges: Edge[];
  /** names of other modules this file reads, by module path */
  uses: Map<string, Names>;
  exports: Map<string, ExportEntry>;
  /** `export * from "x"` */
  starFrom: string[];
  /** identifiers in reference positions, by text */
  refs: Map<string, number>;
  /** local names bound to an import (name "*": a namespace) */
  bindings: Map<string, Binding>;
  /** identifiers in reference positions, `new` expressions, super(…) calls and a.b member reads */
  ids: ts.Identifier[];
  news: ts.NewExpression[];
  supers: ts.CallExpression[];
  members: ts.PropertyAccessExpression[];
}

/** the repository path a relative specifier names, or undefined for packages and outside paths */
function resolve(from: string, spec: string, known: Set<string>): string | undefined {
  if (!spec.startsWith("./") && !spec.startsWith("../")) return undefined;
  const p = posix.normalize(posix.join(posix.dirname(from), spec));
  if (p.startsWith("../")) return undefined;
  if (known.has(p)) return p;
  for (const c of [`${p}.ts`, `${p}.tsx`, `${p}/index.ts`, p.replace(/\.(m|c)?js$/, ".$1ts")]) if (known.has(c)) return c;
  return p;
}

function addUse(uses: Map<string, Names>, target: string, names: Names): void {
  const had = uses.get(target);
  if (had === "*") return;
  if (names === "*") return void uses.set(target, "*");
  const s = had ?? new Set<string>();
  for (const n of names) s.add(n);
  uses.set(target, s);
}

const isImportCall = (n: ts.Node): n is ts.CallExpression => ts.isCallExpression(n) && n.expression.kind === ts.SyntaxKind.ImportKeyword;
const isRequireCall = (n: ts.Node): n is ts.CallExpression => ts.isCallExpression(n) && ts.isIdentifier(n.expression) && n.expression.text === "require";

function literalSpec(n: ts.Expression | undefined): string | undefined {
  return n && (ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n)) ? n.text : undefined;
}

/** the expression a value ends up as, past parentheses, await, casts and the branches of ?: */
function climb(n: ts.Node): ts.Node {
  for (;;) {
    const p = n.parent;
    if (ts.isParenthesizedExpression(p) || ts.isAwaitExpression(p) || ts.isAsExpression(p) || ts.isNonNullExpression(p) || ts.isSatisfiesExpression(p) || ts.isTypeAssertionExpression(p)) n = p;
    else if (ts.isConditionalExpression(p) && p.condition !== n) n = p;
    else if (ts.isBinaryExpression(p) && [ts.SyntaxKind.QuestionQuestionToken, ts.SyntaxKind.BarBarToken].includes(p.operatorToken.kind) && p.right === n) n = p;
    else return n;
  }
}

/** a non-reference identifier: a declared name, a property name, an import/export specifier part */
function isNameOnly(id: ts.Identifier): boolean {
  const p = id.parent;
  if ((ts.isPropertyAccessExpression(p) || ts.isQualifiedName(p)) && (ts.isPropertyAccessExpression(p) ? p.name : p.right) === id) return true;
  if (ts.isImportSpecifier(p) || ts.isExportSpecifier(p) || ts.isImportClause(p) || ts.isNamespaceImport(p) || ts.isNamespaceExport(p) || ts.isImportEqualsDeclaration(p)) return true;
  if (ts.isBindingElement(p)) return p.propertyName === id || p.name === id;
  if (ts.isLabeledStatement(p) || ts.isBreakOrContinueStatement(p)) return true;
  const named = p as ts.Node & { name?: ts.Node };
  if (named.name === id) {
    return (
      ts.isFunctionDeclaration(p) || ts.isFunctionExpression(p) || ts.isClassDeclaration(p) || ts.isClassExpression(p) || ts.isInterfaceDeclaration(p) || ts.isTypeAliasDeclaration(p) ||
      ts.isEnumDeclaration(p) || ts.isModuleDeclaration(p) || ts.isVariableDeclaration(p) || ts.isParameter(p) || ts.isTypeParameterDeclaration(p) || ts.isPropertyAssignment(p) ||
      ts.isPropertySignature(p) || ts.isPropertyDeclaration(p) || ts.isMethodDeclaration(p) || ts.isMethodSignature(p) || ts.isGetAccessor(p) || ts.isSetAccessor(p) || ts.isEnumMember(p) ||
      ts.isJsxAttribute(p)
    );
  }
  return false;
}

/** what a binding takes from a module value: names (imported → local), a namespace, or everything */
type Taken = { pairs: [string, string][] } | { ns: ts.Identifier } | "none" | "*";

function takenBy(name: ts.BindingName): Taken {
  if (ts.isIdentifier(name)) return { ns: name };
  if (ts.isObjectBindingPattern(name)) {
    const pairs: [string, string][] = [];
    for (const e of name.elements) {
      if (e.dotDotDotToken) return "*";
      const key = e.propertyName ?? e.name;
      if (!(ts.isIdentifier(key) || ts.isStringLiteral(key))) return "*";
      pairs.push([key.text, ts.isIdentifier(e.name) ? e.name.text : ""]);
    }
    return { pairs };
  }
  return "*";
}

/**
 * What the code does with the module value of an import() or require() call (or of a call of a
 * parameter that receives `() => import(…)`, as mam.ts's lazy() does), as far as it can be
 * followed; "*" where the value goes somewhere this cannot follow.
 */
function takenFrom(call: ts.CallExpression, depth = 0): Taken[] {
  const n = climb(call);
  const p = n.parent;
  if (ts.isPropertyAccessExpression(p) && p.expression === n) {
    if (p.name.text !== "then") return [{ pairs: [[p.name.text, ""]] }];
    const cb = p.parent;
    if (ts.isCallExpression(cb) && cb.expression === p) {
      const f = cb.arguments[0];
      if (f && (ts.isArrowFunction(f) || ts.isFunctionExpression(f))) return [f.parameters[0] ? takenBy(f.parameters[0].name) : "none"];
    }
    return ["*"];
  }
  if (ts.isElementAccessExpression(p) && p.expression === n) {
    const k = literalSpec(p.argumentExpression);
    return [k === undefined ? "*" : { pairs: [[k, ""]] }];
  }
  if (ts.isVariableDeclaration(p) && p.initializer === n) return [takenBy(p.name)];
  if (ts.isExpressionStatement(p) || ts.isVoidExpression(p)) return ["none"];
  if (ts.isArrowFunction(p) && p.body === n && depth < 3) return throughLocalFunction(p, depth);
  if (ts.isArrayLiteralExpression(p)) {
    // const [{ a }, b] = await Promise.all([import("x"), import("y")])
    const i = p.elements.indexOf(n as ts.Expression);
    const all = p.parent;
    if (ts.isCallExpression(all) && all.arguments[0] === p) {
      const d = climb(all).parent;
      if (ts.isVariableDeclaration(d) && d.initializer === climb(all) && ts.isArrayBindingPattern(d.name)) {
        const el = d.name.elements[i];
        if (!el || ts.isOmittedExpression(el)) return ["none"];
        return [el.dotDotDotToken ? "*" : takenBy(el.name)];
      }
    }
  }
  return ["*"];
}

/** `g(() => import("x"))` where g is a function of this file: what g does with what its parameter returns */
function throughLocalFunction(arrow: ts.ArrowFunction, depth: number): Taken[] {
  const c = arrow.parent;
  if (!ts.isCallExpression(c) || !ts.isIdentifier(c.expression)) return ["*"];
  const fn = localFunction(c.expression.text, c.getSourceFile());
  const param = fn?.parameters[c.arguments.indexOf(arrow)];
  if (!fn?.body || !param || !ts.isIdentifier(param.name)) return ["*"];
  const name = param.name.text;
  const out: Taken[] = [];
  const visit = (x: ts.Node): void => {
    if (ts.isIdentifier(x) && x.text === name && !isNameOnly(x)) out.push(...(ts.isCallExpression(x.parent) && x.parent.expression === x ? takenFrom(x.parent, depth + 1) : ["*" as const]));
    ts.forEachChild(x, visit);
  };
  visit(fn.body);
  return out;
}

/** a function declared at the top of the file: `function g` or `const g = (…) => …` */
function localFunction(name: string, sf: ts.SourceFile): ts.FunctionLikeDeclaration | undefined {
  for (const s of sf.statements) {
    if (ts.isFunctionDeclaration(s) && s.name?.text === name) return s;
    if (!ts.isVariableStatement(s)) continue;
    for (const d of s.declarationList.declarations) {
      let i = d.initializer;
      while (i && ts.isParenthesizedExpression(i)) i = i.expression;
      if (ts.isIdentifier(d.name) && d.name.text === name && i && (ts.isArrowFunction(i) || ts.isFunctionExpression(i))) return i;
    }
  }
  return undefined;
}

/** where a name bound to a module value can be read: its function for a parameter, else its block or file */
function scopeOf(id: ts.Identifier): ts.Node {
  let n: ts.Node = id.parent;
  if (ts.isParameter(n)) return n.parent;
  while (!(ts.isSourceFile(n) || ts.isBlock(n) || ts.isModuleBlock(n) || ts.isCaseBlock(n) || ts.isFunctionLike(n))) n = n.parent;
  return n;
}

export function lineOf(sf: ts.SourceFile, n: ts.Node): number {
  return sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1;
}

/** the dotted text of a chain of identifiers (a.b.c), else undefined */
export function dotted(n: ts.Expression): string | undefined {
  if (ts.isIdentifier(n)) return n.text;
  if (ts.isPropertyAccessExpression(n)) {
    const left = dotted(n.expression);
    return left === undefined ? undefined : `${left}.${n.name.text}`;
  }
  return undefined;
}

/** the facts of one module */
export function factsOf(path: string, text: string, known: Set<string>): ModuleFacts {
  const sf = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, path.endsWith("x") ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const bindings = new Map<string, Binding>();
  const namespaces: { id: ts.Identifier; target: string }[] = [];
  const ids: ts.Identifier[] = [];
  const news: ts.NewExpression[] = [];
  const supers: ts.CallExpression[] = [];
  const members: ts.PropertyAccessExpression[] = [];
  const f: ModuleFacts = { path, sf, edges: [], uses: new Map(), exports: new Map(), starFrom: [], refs: new Map(), bindings, ids, news, supers, members };

  const edge = (spec: string | undefined, at: ts.Node): string | undefined => {
    if (spec === undefined) return undefined;
    const target = resolve(path, spec, known);
    if (target !== undefined) f.edges.push({ target, line: lineOf(sf, at) });
    return target;
  };
  const take = (target: string, taken: Taken[]) => {
    for (const t of taken) {
      if (t === "none") continue;
      if (t === "*") addUse(f.uses, target, "*");
      else if ("ns" in t) {
        namespaces.push({ id: t.ns, target });
        bindings.set(t.ns.text, { target, name: "*" });
      } else {
        addUse(f.uses, target, new Set(t.pairs.map(([n]) => n)));
        for (const [n, local] of t.pairs) if (local) bindings.set(local, { target, name: n });
      }
    }
  };
  const exported = (n: ts.Node) => ts.canHaveModifiers(n) && !!ts.getModifiers(n)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
  const isDefault = (n: ts.Node) => ts.canHaveModifiers(n) && !!ts.getModifiers(n)?.some((m) => m.kind === ts.SyntaxKind.DefaultKeyword);
  const declare = (name: string, at: ts.Node, local?: string) => {
    if (!f.exports.has(name)) f.exports.set(name, { line: lineOf(sf, at), local });
  };
  const declareBinding = (b: ts.BindingName) => {
    if (ts.isIdentifier(b)) declare(b.text, b, b.text);
    else for (const e of b.elements) if (!ts.isOmittedExpression(e)) declareBinding(e.name);
  };

  const visit = (n: ts.Node): void => {
    if (ts.isImportDeclaration(n)) {
      const target = edge(literalSpec(n.moduleSpecifier), n);
      const c = n.importClause;
      if (target !== undefined && c) {
        if (c.name) take(target, [{ pairs: [["default", c.name.text]] }]);
        const nb = c.namedBindings;
        if (nb && ts.isNamespaceImport(nb)) take(target, [{ ns: nb.name }]);
        else if (nb) take(target, [{ pairs: nb.elements.map((e) => [(e.propertyName ?? e.name).text, e.name.text] as [string, string]) }]);
      }
      return;
    }
    if (ts.isExportDeclaration(n)) {
      const target = edge(literalSpec(n.moduleSpecifier), n);
      const c = n.exportClause;
      if (n.moduleSpecifier) {
        if (!c) {
          if (target !== undefined) f.starFrom.push(target);
        } else if (ts.isNamespaceExport(c)) {
          declare(c.name.text, c);
          if (target !== undefined) addUse(f.uses, target, "*");
        } else {
          for (const e of c.elements) {
            const imported = (e.propertyName ?? e.name).text;
            if (target !== undefined) addUse(f.uses, target, new Set([imported]));
            if (!f.exports.has(e.name.text)) f.exports.set(e.name.text, { line: lineOf(sf, e), from: target });
          }
        }
      } else if (c && ts.isNamedExports(c)) {
        for (const e of c.elements) declare(e.name.text, e, (e.propertyName ?? e.name).text);
      }
      return;
    }
    if (ts.isExportAssignment(n)) {
      if (ts.isIdentifier(n.expression)) return declare("default", n, n.expression.text);
      declare("default", n);
    } else if (ts.isImportEqualsDeclaration(n) && ts.isExternalModuleReference(n.moduleReference)) {
      const target = edge(literalSpec(n.moduleReference.expression), n);
      if (target !== undefined) take(target, [{ ns: n.name }]);
      return;
    } else if (exported(n)) {
      if (ts.isVariableStatement(n)) for (const d of n.declarationList.declarations) declareBinding(d.name);
      else if (ts.isFunctionDeclaration(n) || ts.isClassDeclaration(n) || ts.isInterfaceDeclaration(n) || ts.isTypeAliasDeclaration(n) || ts.isEnumDeclaration(n) || ts.isModuleDeclaration(n)) {
        const name = n.name && ts.isIdentifier(n.name) ? n.name.text : undefined;
        declare(isDefault(n) ? "default" : (name ?? "default"), n.name ?? n, name);
      }
    }
    if (isImportCall(n) || isRequireCall(n)) {
      const target = edge(literalSpec(n.arguments[0]), n);
      if (target !== undefined) take(target, takenFrom(n));
    } else if (ts.isImportTypeNode(n)) {
      const a = n.argument;
      const target = ts.isLiteralTypeNode(a) && ts.isStringLiteral(a.literal) ? edge(a.literal.text, n) : undefined;
      if (target !== undefined) {
        const first = n.qualifier ? firstOf(n.qualifier) : undefined;
        // `require("x") as typeof import("x")`: the require's destructuring says what is read
        const cast = climbType(n);
        if (first) addUse(f.uses, target, new Set([first]));
        else if (!(ts.isAsExpression(cast.parent) && (isRequireCall(cast.parent.expression) || isImportCall(cast.parent.expression)))) addUse(f.uses, target, "*");
      }
    } else if (ts.isIdentifier(n)) {
      if (!isNameOnly(n)) ids.push(n);
    } else if (ts.isNewExpression(n)) news.push(n);
    else if (ts.isCallExpression(n) && n.expression.kind === ts.SyntaxKind.SuperKeyword) supers.push(n);
    else if (ts.isPropertyAccessExpression(n)) members.push(n);
    ts.forEachChild(n, visit);
  };
  ts.forEachChild(sf, visit);

  // `import { a } from "./x"; export { a }` passes x's export on: not this file's own name
  for (const e of f.exports.values()) {
    const b = e.local !== undefined ? bindings.get(e.local) : undefined;
    if (b && !e.from) {
      e.from = b.target;
      e.local = undefined;
    }
  }

  // references
  for (const id of ids) f.refs.set(id.text, (f.refs.get(id.text) ?? 0) + 1);

  // what each namespace (import * as ns, const ns = await import(…), a .then((ns) => …)) is read for
  for (const { id: ns, target } of namespaces) {
    const visit = (x: ts.Node): void => {
      if (ts.isIdentifier(x) && x.text === ns.text && x !== ns && !isNameOnly(x)) {
        const p = x.parent;
        const key = ts.isElementAccessExpression(p) && p.expression === x ? literalSpec(p.argumentExpression) : undefined;
        if (ts.isPropertyAccessExpression(p) && p.expression === x) addUse(f.uses, target, new Set([p.name.text]));
        else if (ts.isQualifiedName(p) && p.left === x) addUse(f.uses, target, new Set([p.right.text]));
        else if (key !== undefined) addUse(f.uses, target, new Set([key]));
        else if (ts.isVariableDeclaration(p) && p.initializer === x && ts.isObjectBindingPattern(p.name)) {
          const t = takenBy(p.name); // const { a, b } = ns
          addUse(f.uses, target, typeof t === "object" && "pairs" in t ? new Set(t.pairs.map(([n]) => n)) : "*");
        } else if (!onlyTested(x)) addUse(f.uses, target, "*");
      }
      ts.forEachChild(x, visit);
    };
    visit(scopeOf(ns));
  }
  return f;
}

const SHORT_CIRCUIT = [ts.SyntaxKind.AmpersandAmpersandToken, ts.SyntaxKind.BarBarToken, ts.SyntaxKind.QuestionQuestionToken];
const EQUALITY = [ts.SyntaxKind.EqualsEqualsEqualsToken, ts.SyntaxKind.ExclamationEqualsEqualsToken, ts.SyntaxKind.EqualsEqualsToken, ts.SyntaxKind.ExclamationEqualsToken];

/** a namespace value only tested for being there (`if (ns)`, `!ns`, `ns && …`, `ns === undefined`): no name read */
function onlyTested(id: ts.Identifier): boolean {
  const p = id.parent;
  if ((ts.isIfStatement(p) || ts.isWhileStatement(p)) && p.expression === id) return true;
  if (ts.isConditionalExpression(p) && p.condition === id) return true;
  if (ts.isPrefixUnaryExpression(p) && p.operator === ts.SyntaxKind.ExclamationToken) return true;
  if (ts.isBinaryExpression(p) && SHORT_CIRCUIT.includes(p.operatorToken.kind)) return p.left === id;
  return ts.isBinaryExpression(p) && EQUALITY.includes(p.operatorToken.kind);
}

function firstOf(q: ts.EntityName): string {
  return ts.isIdentifier(q) ? q.text : firstOf(q.left);
}

/** the outermost type node around an import type (typeof import("x") sits in a TypeQuery-like node) */
function climbType(n: ts.Node): ts.Node {
  while (ts.isTypeNode(n.parent) || ts.isParenthesizedTypeNode(n.parent)) n = n.parent;
  return n;
}
