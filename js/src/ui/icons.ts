// The widgets' symbols as inline SVG (issue 38 item 6): a glyph such as ⏸ renders as a missing-glyph
// box where the notebook's fonts lack it, an SVG path renders the same everywhere. Each icon is
// decorative (aria-hidden): its button or mark has an accessible name of its own. Text keeps only
// the characters of js/test/glyphs.test.ts's closed set (checked in real JupyterLab's fonts by
// tests/browser/test_scale_e2e.py).

const PATHS = {
  play: "M4 2.5v11l9-5.5z",
  pause: "M3.5 2.5h3v11h-3zM9.5 2.5h3v11h-3z",
  back: "M12 2.5v11L3 8z",
  next: "M4 2.5v11l9-5.5z",
  "live-on": "M8 3a5 5 0 1 0 0 10A5 5 0 1 0 8 3z",
  "live-off": "M8 3a5 5 0 1 0 0 10A5 5 0 1 0 8 3zm0 1.6a3.4 3.4 0 1 1 0 6.8a3.4 3.4 0 1 1 0-6.8z",
  up: "M8 3l6 9H2z",
  expand: "M3 5.5h10L8 11.5z",
  collapse: "M5.5 3v10L11.5 8z",
  check: "M2.5 8.5l1.6-1.6 2.6 2.6 5.2-5.7 1.6 1.5-6.8 7.4z",
  cross: "M3.6 2.4L8 6.8l4.4-4.4 1.2 1.2L9.2 8l4.4 4.4-1.2 1.2L8 9.2l-4.4 4.4-1.2-1.2L6.8 8 2.4 3.6z",
  // an axis break: two slanted strokes (a gap of idle time cut out of a time axis)
  break: "M4.5 14.5L8 1.5h1.6L6.1 14.5zM8.4 14.5L11.9 1.5h1.6L10 14.5z",
} as const;

export type IconName = keyof typeof PATHS;
const SVG = "http://www.w3.org/2000/svg";

/** An inline 16×16 SVG icon sized to the text (1em), in the text's colour. */
export function icon(name: IconName, cls = ""): SVGSVGElement {
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", "0 0 16 16");
  svg.setAttribute("width", "1em");
  svg.setAttribute("height", "1em");
  svg.setAttribute("aria-hidden", "true");
  svg.setAttribute("focusable", "false");
  svg.setAttribute("class", `dsh-icon dsh-icon-${name}${cls ? ` ${cls}` : ""}`);
  const path = document.createElementNS(SVG, "path");
  path.setAttribute("d", PATHS[name]);
  path.setAttribute("fill", "currentColor");
  svg.append(path);
  return svg;
}

/** Replace `el`'s content with an icon and a text label (a button's face). */
export function iconLabel(el: Element, name: IconName | null, text: string, after = false): void {
  el.textContent = "";
  const parts: (Node | string)[] = name ? (after ? [`${text} `, icon(name)] : [icon(name), ` ${text}`]) : [text];
  if (!text && name) parts.splice(0, parts.length, icon(name));
  el.append(...parts);
}
