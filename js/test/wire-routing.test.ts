// Issue 25 item 3, the client side: routing on `type` (or a frame's `kind`) happens only on the
// wire's typed unions. Outside js/src/wire*.ts no `.type === "..."` / `switch (x.type)` (nor the
// same on `.kind`) reads it from an untyped
// value (`any`, `unknown`, `Record<string, unknown>`, a plain `string` field), and no branch
// that checked `x.type` casts `x` with `as` (the union narrows it; a cast would hide a wrong one).
// The check runs the TypeScript compiler over js/src and asks its checker for each site's types.
import { readdirSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const src = join(root, "src");

/** Sites in files other helpers were editing when this test landed (issue 25): removed at the
 *  merge, after which this list must be empty. `file:line text` as `findings` prints them. */
const KNOWN: readonly string[] = [
];

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return sources(p);
    return p.endsWith(".ts") && !p.endsWith(".d.ts") ? [p] : [];
  });
}

const strip = (e: ts.Expression): ts.Expression => (ts.isParenthesizedExpression(e) ? strip(e.expression) : e);

/** `x.type` / `x["type"]` (or `kind`) → `x`, else undefined. */
function typeRead(e: ts.Expression): ts.Expression | undefined {
  const s = strip(e);
  if (ts.isPropertyAccessExpression(s) && (s.name.text === "type" || s.name.text === "kind")) return s.expression;
  if (ts.isElementAccessExpression(s) && ts.isStringLiteral(s.argumentExpression) && (s.argumentExpression.text === "type" || s.argumentExpression.text === "kind")) return s.expression;
  return undefined;
}

const isEq = (k: ts.SyntaxKind) =>
  k === ts.SyntaxKind.EqualsEqualsEqualsToken || k === ts.SyntaxKind.ExclamationEqualsEqualsToken
  || k === ts.SyntaxKind.EqualsEqualsToken || k === ts.SyntaxKind.ExclamationEqualsToken;

/** The objects whose `type` a condition compares with a string literal (their source text). */
function checkedIn(cond: ts.Node, sf: ts.SourceFile): Set<string> {
  const out = new Set<string>();
  const visit = (n: ts.Node): void => {
    if (ts.isBinaryExpression(n) && isEq(n.operatorToken.kind)) {
      for (const [a, b] of [[n.left, n.right], [n.right, n.left]] as const) {
        const obj = typeRead(a);
        if (obj && ts.isStringLiteralLike(strip(b))) out.add(strip(obj).getText(sf));
      }
    }
    ts.forEachChild(n, visit);
  };
  visit(cond);
  return out;
}

const exits = (s: ts.Statement): boolean =>
  ts.isContinueStatement(s) || ts.isReturnStatement(s) || ts.isBreakStatement(s) || ts.isThrowStatement(s)
  || (ts.isBlock(s) && s.statements.length > 0 && exits(s.statements[s.statements.length - 1]));

/** The objects an early exit (`if (x.type !== "a") continue;`) before `n` in `block` checked. */
function guardsBefore(block: ts.Block | ts.SourceFile, n: ts.Node, sf: ts.SourceFile): Set<string> {
  const out = new Set<string>();
  for (const st of block.statements) {
    if (st.pos <= n.pos && n.end <= st.end) break;
    if (ts.isIfStatement(st) && exits(st.thenStatement)) for (const x of checkedIn(st.expression, sf)) out.add(x);
  }
  return out;
}

/** Is `type` / `kind`, read from a value, a string-literal union (a discriminant)? A DOM value
 *  (`el.dataset.kind`, `input.type`) is not the wire's: it passes. */
function discriminant(program: ts.Program, checker: ts.TypeChecker, read: ts.Expression): boolean {
  const sym = checker.getTypeAtLocation(typeRead(read)!).getSymbol();
  const owner = sym && sym.flags & (ts.SymbolFlags.Interface | ts.SymbolFlags.Class) ? sym.declarations?.[0] : undefined;
  if (owner && program.isSourceFileDefaultLibrary(owner.getSourceFile())) return true; // (not `Record`: a type literal)
  const t = checker.getTypeAtLocation(read);
  const parts = t.isUnion() ? t.types : [t];
  return parts.every((p) => (p.flags & (ts.TypeFlags.StringLiteral | ts.TypeFlags.Undefined | ts.TypeFlags.Never)) !== 0);
}

function findings(): string[] {
  const config = ts.parseJsonConfigFileContent(ts.readConfigFile(join(root, "tsconfig.json"), ts.sys.readFile).config, ts.sys, root);
  const files = sources(src).filter((f) => !/[/\\]wire[^/\\]*\.ts$/.test(f));
  const program = ts.createProgram(files, { ...config.options, noEmit: true });
  const checker = program.getTypeChecker();
  const out: string[] = [];
  for (const file of files) {
    const sf = program.getSourceFile(file)!;
    const at = (n: ts.Node, what: string) => {
      const line = sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1;
      out.push(`${relative(root, file)}:${line} ${what}: ${n.getText(sf).slice(0, 90)}`);
    };
    const visit = (n: ts.Node): void => {
      // routing over an untyped value
      if (ts.isBinaryExpression(n) && isEq(n.operatorToken.kind)) {
        for (const [a, b] of [[n.left, n.right], [n.right, n.left]] as const) {
          if (typeRead(a) && ts.isStringLiteralLike(strip(b)) && !discriminant(program, checker, strip(a))) at(n, "untyped route");
        }
      }
      if (ts.isSwitchStatement(n) && typeRead(n.expression) && !discriminant(program, checker, strip(n.expression))) at(n.expression, "untyped switch");
      // a cast after a type check
      if (ts.isAsExpression(n) || ts.isTypeAssertionExpression(n)) {
        const target = n.type.getText(sf);
        if (target !== "const") {
          const subject = strip(n.expression).getText(sf);
          for (let p: ts.Node | undefined = n.parent; p; p = p.parent) {
            let checked: Set<string> | undefined;
            if (ts.isIfStatement(p) || ts.isConditionalExpression(p)) checked = checkedIn(ts.isIfStatement(p) ? p.expression : p.condition, sf);
            else if (ts.isBinaryExpression(p) && p.operatorToken.kind === ts.SyntaxKind.AmpersandAmpersandToken) checked = checkedIn(p.left, sf);
            else if (ts.isCaseClause(p) && ts.isSwitchStatement(p.parent.parent)) {
              const obj = typeRead(p.parent.parent.expression);
              checked = new Set(obj ? [strip(obj).getText(sf)] : []);
            }
            if (!checked && (ts.isBlock(p) || ts.isSourceFile(p))) checked = guardsBefore(p, n, sf);
            if (checked?.has(subject)) { at(n, "cast after a type check"); break; }
            if (ts.isFunctionLike(p)) break;
          }
        }
      }
      ts.forEachChild(n, visit);
    };
    visit(sf);
  }
  return out;
}

describe("the typed wire on the client (issue 25 item 3)", { timeout: 120_000 }, () => {
  let cached: string[] | undefined;
  const found = () => (cached ??= findings());
  it("routes on `type` only over discriminated unions, never casts after a check", () => {
    expect(found().filter((f) => !KNOWN.includes(f))).toEqual([]);
  });
  it("lists no known site that is gone", () => {
    expect(KNOWN.filter((k) => !found().includes(k))).toEqual([]);
  });
});
