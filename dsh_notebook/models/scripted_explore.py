"""The scripted model's ``explore`` repertoire: improvised questions about the demo workspace
(:mod:`dsh_notebook.demo`) answered from real tool results, so a class can ask its own questions
offline.

- "which files are there?", "show me the project structure" → ``glob **/*``, then the list it
  returned, grouped by folder;
- a file named in the prompt ("what does src/math.ts do?", "open package.json") → ``read``, then
  what the file really holds (its exported functions, its scripts, its tests, its length);
- "where is divide used?", "search for Error", "find 'subtract'" → ``grep``, then the matches.

Each returns ``None`` when the prompt is not of its kind; the model then says what it can do.
"""

from __future__ import annotations

import json
import re

from .scripted_scenarios import Decision, TurnCall, numbered_lines

_LIST = ("files", "file list", "list", "structure", "tree", "what's in", "what is in", "workspace", "project",
         "folder", "directory", "文件", "目录", "结构")
_SEARCH = re.compile(r"\b(?:search(?: for)?|grep(?: for)?|find|where(?: is| are| does)?|which files? (?:use|mention|contain)s?|usages? of)\s+"
                     r"[\"'`]?(?P<word>[A-Za-z_][\w.]*)[\"'`]?", re.IGNORECASE)
_FILE = re.compile(r"(?P<path>(?:[\w.-]+/)*[\w-]+\.(?:ts|mjs|js|json|md))\b")
_KNOWN = {"math.ts": "src/math.ts", "run.mjs": "test/run.mjs", "package.json": "package.json", "readme.md": "README.md"}
_STOP = {"the", "a", "an", "it", "is", "are", "used", "defined", "this", "that", "in", "for", "of"}


def _file_in(prompt: str) -> str | None:
    m = _FILE.search(prompt)
    if m:
        path = m.group("path")
        return _KNOWN.get(path.lower(), path)
    low = prompt.lower()
    for word, path in (("math", "src/math.ts"), ("test runner", "test/run.mjs"), ("package", "package.json")):
        if word in low:
            return path
    return None


def _search_word(prompt: str) -> str | None:
    m = _SEARCH.search(prompt)
    if not m or m.group("word").lower() in _STOP:
        quoted = re.search(r"[\"'`]([A-Za-z_][\w.]*)[\"'`]", prompt)
        return quoted.group(1) if quoted and m else None
    return m.group("word")


def _describe_file(path: str, output: str) -> str:
    lines = numbered_lines(output)
    text = "\n".join(lines[k] for k in sorted(lines))
    n = len(lines)
    if path.endswith("package.json"):
        try:
            pkg = json.loads(text)
        except ValueError:
            pkg = {}
        scripts = ", ".join(f"`{k}` → `{v}`" for k, v in (pkg.get("scripts") or {}).items()) or "none"
        return f"`{path}` ({n} lines) names the package `{pkg.get('name', '?')}`; its scripts: {scripts}."
    funcs = re.findall(r"export (?:async )?function (\w+)\s*\(([^)]*)\)", text)
    if funcs:
        listed = ", ".join(f"`{name}({args})`" for name, args in funcs)
        head = next((lines[k].lstrip("/ ").strip() for k in sorted(lines) if lines[k].startswith("//")), "")
        return (f"`{path}` has {n} lines{f' ({head})' if head else ''} and exports {len(funcs)} functions: {listed}. "
                "The `read` tool's result above is the file itself: each line with its number.")
    checks = len(re.findall(r"\b(?:check|assert|expect|test)\s*\(", text))
    imports = re.findall(r"import .* from [\"']([^\"']+)[\"']", text)
    extra = f"; it imports {', '.join(f'`{i}`' for i in imports)}" if imports else ""
    extra += f" and makes {checks} checks" if checks else ""
    first = next((lines[k].strip() for k in sorted(lines) if lines[k].strip()), "")
    return f"`{path}` has {n} lines{extra}. It starts with: `{first[:100]}`."


def _list_answer(output: str) -> str:
    files = [f for f in output.splitlines() if f and not f.startswith("(")]
    by_dir: dict[str, list[str]] = {}
    for f in files:
        folder, _, name = f.rpartition("/")
        by_dir.setdefault(folder or ".", []).append(name)
    parts = [f"`{d}/`: {', '.join(sorted(n))}" if d != "." else f"top level: {', '.join(sorted(n))}" for d, n in sorted(by_dir.items())]
    return (f"The workspace has {len(files)} files — " + "; ".join(parts) + ". "
            "Ask me what one of them does, or search for a word in them.")


def _grep_answer(word: str, output: str) -> str:
    hits = [line for line in output.splitlines() if re.match(r"^[^\s:]+:\d+:", line)]
    if not hits:
        return f"`{word}` does not appear in the workspace (the `grep` tool found no match)."
    files = sorted({h.split(":", 1)[0] for h in hits})
    shown = "; ".join(f"`{h.split(':', 2)[0]}:{h.split(':', 2)[1]}` {h.split(':', 2)[2].strip()[:60]}" for h in hits[:5])
    more = f" (and {len(hits) - 5} more)" if len(hits) > 5 else ""
    return f"`{word}` appears {len(hits)} time{'' if len(hits) == 1 else 's'} in {len(files)} file{'' if len(files) == 1 else 's'}: {shown}{more}."


def explore(prompt: str, exchanges: list[TurnCall]) -> Decision | None:
    """The next action for a question about the demo workspace, or ``None`` for another prompt."""
    low = prompt.lower()
    word = _search_word(prompt)
    path = _file_in(prompt)
    args: dict[str, object]
    if word:
        tool, args = "grep", {"pattern": re.escape(word)}
    elif path:
        tool, args = "read", {"file_path": path}
    elif any(k in low for k in _LIST):
        tool, args = "glob", {"pattern": "**/*"}
    else:
        return None
    if not exchanges:
        return "", tool, args
    last = exchanges[-1]
    if not last.ok:
        return f"The `{last.call.name}` tool failed: {last.text.strip()[:200]}", None, None
    if tool == "grep":
        return _grep_answer(word or "", last.text), None, None
    if tool == "read":
        return _describe_file(str(args["file_path"]), last.text), None, None
    return _list_answer(last.text), None, None


def might_explore(prompt: str) -> bool:
    """Whether ``auto`` should hand the prompt to :func:`explore`."""
    return explore(prompt, []) is not None
