"""What a person sees, measured in the page: every visible text of a widget with its computed
font size and its contrast against the background it is actually drawn on.

The effective background is found by walking the ancestors and compositing their background
colours (any CSS colour syntax, resolved through a canvas, so ``color-mix()`` and ``rgba()`` count);
the text colour is composited over it, then every ancestor's ``opacity`` is multiplied in, as the
browser does for an opacity group. Contrast is WCAG 2's relative-luminance ratio.
"""

from __future__ import annotations

from typing import Any

AUDIT_JS = r"""(sel) => {
  const cv = document.createElement('canvas'); cv.width = cv.height = 1;
  const ctx = cv.getContext('2d', {willReadFrequently: true});
  const rgba = (css) => {
    ctx.clearRect(0, 0, 1, 1); ctx.fillStyle = '#000'; ctx.fillStyle = css; ctx.fillRect(0, 0, 1, 1);
    const d = ctx.getImageData(0, 0, 1, 1).data; return [d[0], d[1], d[2], d[3] / 255];
  };
  const over = (top, under) => { const a = top[3]; return [0, 1, 2].map(i => top[i] * a + under[i] * (1 - a)).concat([1]); };
  const lum = (c) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]); };
  const ratio = (a, b) => { const x = lum(a), y = lum(b); return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05); };
  const background = (el) => {
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const c = rgba(getComputedStyle(e).backgroundColor);
      if (c[3] > 0) layers.push(c);
      if (c[3] >= 1) break;
    }
    let bg = [255, 255, 255, 1];
    for (let i = layers.length - 1; i >= 0; i--) bg = over(layers[i], bg);
    return bg;
  };
  const opacity = (el) => { let o = 1; for (let e = el; e; e = e.parentElement) o *= parseFloat(getComputedStyle(e).opacity); return o; };
  const out = [];
  for (const root of document.querySelectorAll(sel)) {
    for (const el of root.querySelectorAll('*')) {
      if (['SELECT', 'OPTION', 'SCRIPT', 'STYLE', 'TEXTAREA', 'INPUT'].includes(el.tagName)) continue;
      const text = [...el.childNodes].filter(n => n.nodeType === 3).map(n => n.textContent).join('').trim();
      if (!text) continue;
      const cs = getComputedStyle(el);
      const rects = el.getClientRects();
      if (!rects.length || cs.visibility !== 'visible' || el.closest('[hidden]')) continue;
      if ([...rects].every(r => r.width === 0 || r.height === 0)) continue;
      const bg = background(el);
      const o = opacity(el);
      const fg = over(rgba(cs.color), bg);
      const seen = [0, 1, 2].map(i => fg[i] * o + bg[i] * (1 - o));
      const mono = /mono/i.test(cs.fontFamily);
      out.push({text: text.slice(0, 60), cls: String(el.className).slice(0, 60), tag: el.tagName,
                size: parseFloat(cs.fontSize), mono, ratio: Math.round(ratio(seen, bg) * 100) / 100});
    }
  }
  return out;
}"""


def audit(page: Any, selector: str) -> list[dict[str, Any]]:
    """Every visible text node's element inside ``selector``: size, monospace, contrast."""
    return list(page.evaluate(AUDIT_JS, selector))


def violations(items: list[dict[str, Any]]) -> list[str]:
    """Texts under 11 px, code under 12 px, or under 4.5:1 contrast."""
    bad = []
    for it in items:
        if it["size"] < 11 or (it["mono"] and it["size"] < 12):
            bad.append(f"size {it['size']}px{' (code)' if it['mono'] else ''}: {it['cls']} {it['text']!r}")
        if it["ratio"] < 4.5:
            bad.append(f"contrast {it['ratio']}:1: {it['cls']} {it['text']!r}")
    return bad


def summary(items: list[dict[str, Any]]) -> dict[str, float]:
    """The smallest sizes and the lowest contrast measured (figures for the report)."""
    return {
        "texts": len(items),
        "min_size": min((i["size"] for i in items), default=0),
        "min_code_size": min((i["size"] for i in items if i["mono"]), default=0),
        "min_ratio": min((i["ratio"] for i in items), default=0),
    }
