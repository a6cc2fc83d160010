// @vitest-environment jsdom
// Every character beyond ASCII that the widgets write (string and template literals of js/src,
// the CSS `content` strings) is one of a closed set of glyphs that the fonts JupyterLab falls back
// to carry (issue 38 item 6: ⏸ rendered as a missing-glyph box). Symbols are inline SVG
// (src/ui/icons.ts). tests/browser/test_scale_e2e.py draws each glyph of the set in real
// JupyterLab's UI and code fonts and checks none is the missing-glyph box.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { icon } from "../src/ui/icons";

const SRC = resolve(__dirname, "../src");
export const GLYPHS: readonly string[] = JSON.parse(readFileSync(resolve(__dirname, "glyphs.json"), "utf8")).glyphs;

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? sources(p) : p.endsWith(".ts") ? [p] : [];
  });
}

/** Each non-ASCII character of the literals of `file`, with where it is. */
function literalGlyphs(file: string): Map<string, string> {
  const sf = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
  const out = new Map<string, string>();
  const visit = (n: ts.Node): void => {
    if (ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n) || ts.isTemplateHead(n) || ts.isTemplateMiddle(n) || ts.isTemplateTail(n)) {
      for (const ch of n.text) if ((ch.codePointAt(0) ?? 0) > 0x7e) out.set(ch, `${file}:${sf.getLineAndCharacterOfPosition(n.getStart()).line + 1}`);
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

describe("glyphs", () => {
  it("the widgets write only glyphs of the closed set", () => {
    const found = new Map<string, string>();
    for (const f of sources(SRC)) for (const [ch, at] of literalGlyphs(f)) found.set(ch, at);
    for (const m of readFileSync(join(SRC, "widget.css"), "utf8").matchAll(/content:\s*"([^"]*)"/g)) {
      for (const ch of m[1]) if ((ch.codePointAt(0) ?? 0) > 0x7e) found.set(ch, "widget.css");
    }
    const outside = [...found].filter(([ch]) => !GLYPHS.includes(ch)).map(([ch, at]) => `${ch} U+${(ch.codePointAt(0) ?? 0).toString(16)} at ${at}`);
    expect(outside).toEqual([]);
    expect(found.size).toBeGreaterThan(5); // the scan reads the literals (it finds the set's glyphs)
    expect(GLYPHS).not.toContain("⏸");
  }, 60_000); // parses every source: seconds on a loaded machine

  it("draws symbols as inline SVG with no text", () => {
    const svg = icon("pause");
    expect(svg.namespaceURI).toBe("http://www.w3.org/2000/svg");
    expect(svg.getAttribute("aria-hidden")).toBe("true");
    expect(svg.textContent).toBe("");
    expect(svg.querySelector("path")?.getAttribute("d")).toMatch(/^M/);
  });
});
