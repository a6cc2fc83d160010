"""The command-line table of issue 36: every line with the verdict it must get.

``U(line, why)`` — *unresolved*: ``why`` is a fragment of the reason the parser must give. Such a
line matches every deny and ask rule (``touch *`` as much as ``rm *``), never an allow rule or a
grant — not even a grant of itself or of every read-only name — and is offered no grant.

``R(line, grant, touch=, ro=)`` — *resolved*: ``grant`` is what "allow for this session" offers
(``EXACT``: the line itself, ``None``: nothing — it reads ``~``), ``touch``
whether a ``touch *`` rule matches it (``deny`` and ``ask`` alike), ``ro`` what
:func:`~dsh_notebook.tools.grants.is_read_only` says. Each resolved line is also run by
``/bin/bash`` (:mod:`tests.tools.bash_oracle`) unless ``oracle=False`` (it runs a path).
``W(line)`` — resolved, and it writes a file: no grant, no allow rule, not read-only.
"""

from __future__ import annotations

from dataclasses import dataclass

EXACT = "<the line itself>"


@dataclass(frozen=True)
class Case:
    line: str
    why: str | None = None  # unresolved: a fragment of the reason
    grant: str | None = None
    touch: bool = False
    ro: bool = False
    oracle: bool = True
    writes: bool = False  # resolved: output redirected to a file (no allow rule matches it)

    def __str__(self) -> str:
        return repr(self.line[:60])


def U(line: str, why: str) -> Case:
    return Case(line, why)


def R(line: str, grant: str | None = EXACT, *, touch: bool = False, ro: bool = False, oracle: bool = True) -> Case:
    return Case(line, None, grant, touch, ro, oracle)


def W(line: str) -> Case:
    """Resolved, and it writes a file: no grant, no allow rule, not read-only."""
    return Case(line, None, None, writes=True)


ISSUE_VARIANTS = [  # issue 36: what ran unasked under a grant on `ls -la` or a `touch *` deny rule
    U("n=$'a[\\x24(touch G1)]'; ls <\"${!n}\"", "assignment"),
    U('ls <"${!n}"', "parameter expansion in a redirect"),
    U('ls > "${!n}"', "parameter expansion in a redirect"),
    U('cat 2>"$f" x', "parameter expansion in a redirect"),
    U('for x in "${!n}"; do ls -la; done', "`for` loop"),
    U("cat <<EOF\n${!n}\nEOF", "here-document with expansions"),
    U("cat <<EOF\n$(touch G1)\nEOF", "here-document with expansions"),
    U("cat <<EOF\n`touch G1`\nEOF", "here-document with expansions"),
    U("cat <<EOF\nx\\\nEOF\ntouch G1\nEOF", "here-document with expansions"),
    U("hash -p /usr/bin/touch ls; ls X", "`hash`"),
    U("mapfile -C 'touch X #' -c 1 <<< x", "`mapfile`"),
    U("readarray -C 'touch X #' -c 1 <<< x", "`readarray`"),
    U("printf -v 'a[x]' 1", "`printf -v`"),
    U("printf -va 1", "`printf -v`"),
    U("printf -v a '%s' 1", "`printf -v`"),
    U("read 'a[$(touch X)]' <<< 1", "`read`"),
    U("declare 'a[$(touch X)]=1'", "declaration"),
    U("typeset -a x", "declaration"),
    U("local x", "declaration"),
    U("export 'a[1]=1'", "declaration"),
    U("readonly x", "declaration"),
    U("let 'a[$(touch X)]=1'", "`let`"),
    U("test -v 'PIPESTATUS[$(touch X)]'", "`test -v`"),
    U("[ -v 'PIPESTATUS[$(touch X)]' ]", "`[ -v`"),
    U("[ -R x ]", "`[ -v`"),
    U("trap 'touch X' EXIT", "`trap`"),
    U("enable -f ./x.so x", "`enable`"),
    U("alias ls='touch X'", "`alias`"),
    U("builtin echo x", "`builtin`"),
    U("command -p touch X", "`command -p`"),
    U("command -pv ls", "`command -p`"),
    U("eval touch X", "`eval`"),
    U("source x.sh", "`source`"),
    U(". x.sh", "`.`"),
    U("echo $((1 + 2))", "arithmetic expansion"),
    U("echo $[1+2]", "arithmetic expansion"),
    U("(( a[$(touch X)] ))", "((…))"),
    U("[[ a[$(touch X)] -eq 1 ]]", "[[ … ]]"),
    U("[[ -f x ]]", "[[ … ]]"),
    U("case x in a) touch X;; esac", "`case`"),
    U("unset 'a[$(touch X)]'", "`unset`"),
    U("getopts a 'a[$(touch X)]'", "`getopts`"),
    U("wait -p 'a[$(touch X)]'", "`wait -p`"),
    U("set -k; ls", "`set`"),
    U("shopt -s expand_aliases", "`shopt`"),
]  # fmt: skip

EXPANSIONS_AND_SHAPES = [
    U("$CMD x", "parameter expansion"),
    U("${CMD} x", "parameter expansion"),
    U("$(echo touch) X", "command substitution"),
    U("`echo touch` X", "command substitution"),
    U("ls <(touch X)", "process substitution"),
    U("cat >(touch X)", "process substitution"),
    U("diff <(ls a) <(ls b)", "process substitution"),
    U("f() { touch X; }; f", "function definition"),
    U("function f { ls; }", "function definition"),
    U("if true; then touch X; fi", "`if`"),
    U("while false; do ls; done", "loop"),
    U("until true; do ls; done", "loop"),
    U("select x in a; do ls; done", "`select` loop"),
    U("coproc touch X", "`coproc`"),
    U("X=1 ls", "assignment"),
    U("PATH=. ls", "assignment"),
    U("GIT_PAGER=sh git status", "assignment"),
    U("a[1]=x ls", "assignment"),
    U("x=(1 2)", "assignment"),
    U("{fd}>f ls", "{fd}"),
    U("exec {fd}>f", "{fd}"),
    U("l*s", "pattern or `~` in the command name"),
    U("?s -la", "pattern or `~` in the command name"),
    U("[l]s", "parse error"),
    U("~/bin/ls", "pattern or `~` in the command name"),
    U("{touch,X}", "parse error"),
    U("ls {a,b}", "brace expansion"),
    U("ls x{1..3}", "brace expansion"),
    U('echo $"hello"', "locale translation"),
    U('echo "$HOME"', "parameter expansion"),
    U('echo "${x:-$(touch X)}"', "parameter expansion"),
    U("echo $0 $@ ${#x}", "parameter expansion"),
    U('echo "$(touch X)"', "command substitution"),
    U('echo "`touch X`"', "command substitution"),
    U("ls | ! grep x", "`!`"),
    U("echo ~root", "tilde expansion"),
    U("echo ~+", "tilde expansion"),
    U("echo a=~/x", "tilde expansion"),
    U("ls $'\\u00e9'", "escape in $'…'"),
    U("echo $'\\x00'", "NUL"),
    U("echo $'\\cA'", "escape in $'…'"),
    U("echo a\\", "parse error"),
    U("echo a\rb", "skipped"),
    U("ls\x00; touch X", "NUL"),
    U("echo x; " * 10000, "too long"),
]  # fmt: skip

PARSE_ERRORS_AND_SHELLS = [
    U("ls (", "parse error"),
    U("echo 'unterminated", "parse error"),
    U("ls &&", "parse error"),
    U("ls >", "parse error"),
    U("cat <<EOF; ls\nb\nEOF", "parse error"),
    U("ls @(a|b)", "parse error"),
    U("ls 3<>f", "parse error"),
    U("cat <<EOF\n EOF\ntouch X", "without its end"),
    U("echo a;;b", "`;;`"),
    U("cat -<<E\nb\nE", "operator tree-sitter reads differently"),
    U("cat <<EOF |\nEOF\ntouch z\nEOF", "may place differently"),  # bash: body empty, then `touch z`
    R("cat <<EOF | grep -c x\nbody\nEOF", ro=True),  # its `<<` token holds the `-`
    U("sh script.sh", "reads a script"),
    U("bash", "reads a script"),
    U("exec -a x bash", "reads a script"),
    U("echo ls | xargs sh", "reads a script"),
    U("timeout 5 bash x.sh", "reads a script"),
    U("sh -s < x.sh", "reads a script or stdin"),
    U("bash -i -c ls", "start-up files"),
    U("bash -l -c ls", "start-up files"),
    U("bash -O extglob -c ls", "start-up files"),
    U("bash -k -c ls", "start-up files"),
    U("bash --rcfile x -c ls", "start-up files"),
    U("zsh -c ls", "`zsh`"),
    U("bash -c 'echo $1' _ x", "parameter expansion"),
    U("bash -c 'X=1 touch Y'", "assignment"),
    U("env -S 'touch X'", "option of `env`"),
    U("timeout --foo 5 ls", "option of `timeout`"),
    U("env BASH_ENV=x.sh bash -c true", "BASH_ENV"),
    U("env LD_PRELOAD=x.so ls", "LD_PRELOAD"),
    U("sudo LD_PRELOAD=x ls", "LD_PRELOAD"),
    U("ls > /dev/tcp/127.0.0.1/80", "network redirect"),
    U("cat < /dev/udp/h/1", "network redirect"),
    U("find . -exec {} \\;", "runs the files it finds"),
    U("find . -execdir {} +", "runs the files it finds"),
    U("time -o f ls", "`time`"),
    U("echo hi | tee >(cat)", "process substitution"),
]  # fmt: skip

EARLIER_ROUNDS = [  # issue 21's spellings of `touch M` (tests/hardening/test_approvals_parsed.py)
    R(" touch M", touch=True), R("\\touch M", touch=True), R("/usr/bin/touch M", touch=True, oracle=False),
    R("command touch M", touch=True), R("true && touch M", touch=True), R("echo; touch M", touch=True),
    R("\ttouch M", touch=True), R("env touch M", touch=True), R("t''ouch M", touch=True), R("exec touch M", touch=True),
    R("echo M | xargs touch", touch=True), R("nice -n 5 touch M", touch=True), R("sudo -n touch M", touch=True),
    R("echo\ntouch M", touch=True), R("echo | touch M", touch=True), R("(touch M)", touch=True),
    R("{ touch M; }", touch=True), R("cat <<EOF\nhi\nEOF\ntouch M", touch=True), R("bash -c 'touch M'", touch=True),
    R("timeout 5 touch M", touch=True), R("find . -maxdepth 0 -exec touch M \\;", touch=True),
    R("stdbuf -o0 touch M", touch=True), R("nohup touch M", touch=True),
    R("env -i PATH=/usr/bin:/bin touch M", touch=True), R('"touch" M', touch=True),
    R("echo hello" + " " * 400 + "; touch M", touch=True), R("echo a || touch M", touch=True),
    R("echo | sh -c 'touch M'", touch=True), R("setsid touch M", touch=True),
    R("xargs -n1 touch < /dev/null; touch M", touch=True), R("env env env env env env touch M", touch=True),
    R("nice nice nice nice nice touch M", touch=True), R("time touch M", touch=True),
    R("ec\\\nho x; to\\\nuch M", touch=True), R("! touch M", touch=True), R("touch M &", touch=True),
    R("echo a |& touch M", touch=True), R("echo x > /dev/null; touch M", touch=True),
    U("X=1 touch M", "assignment"), U("$(echo touch) M", "command substitution"), U("eval touch M", "`eval`"),
    U("if true; then touch M; fi", "`if`"), U("for i in 1; do touch M; done", "`for` loop"),
    U("f() { touch M; }; f", "function definition"), U("T=touch; $T M", "assignment"),
    U("echo `echo hi`; touch M", "command substitution"), U("builtin command exec touch M", "`builtin`"),
]  # fmt: skip

ORDINARY = [  # what people and models type: stays resolved
    R("ls -la", "ls *", ro=True), R("git status --short", "git status *", ro=True),
    R("pytest -q tests/"), R('grep -rn "a && b" src | head', ro=True),
    R("awk 'NR>=3 && $2 > 0' data.txt"), R('git commit -m "a && b"'),
    R("cat README.md", "cat *", ro=True), R("head -n 20 src/app.py", "head *", ro=True),
    R("wc -l *.py", "wc *", ro=True), R("find . -name '*.py' -type f", "find *", ro=True),
    R("sed -n 1,5p notes.txt", "sed *", ro=True), R("git log --oneline -5", "git log *", ro=True),
    R("git diff HEAD~1 -- src", "git diff *", ro=True), R("python -m pytest -x"), R("npm test"),
    R("make -j2 all"), R("cd src && ls"), R("ls 2>/dev/null", "ls *", ro=True), W("echo hi > out.txt"),
    W("cat > notes.md <<'EOF'\n# Title\n$HOME stays as written\nEOF"),
    R("python3 <<'EOF'\nprint(\"hi\")\nEOF"), R("python - <<'EOF'\nprint(1)\nEOF"),  # tree-sitter drops the `-`
    R("grep -c TODO app.py || true", ro=True),
    R("[ -f setup.py ] && cat setup.py"), R("test -d build || mkdir build"),
    R("printf '%s\\n' a b", "printf *", ro=True), R("echo $'a\\tb\\x41\\101'", "echo *", ro=True),
    R("ls ~/projects ~", None), R("rg foo -g '*.py'", "rg *", ro=True),
    R("git show HEAD:README.md", "git show *", ro=True), R("du -sh .", "du *", ro=True),
    R("sort data.txt | uniq -c | sort -rn | head"), R("tar tf archive.tar", "tar *", ro=True),
    R("jq '.a' f.json"), R("curl -s https://example.com"), R("pip install -e ."),
    R("ls -la # list everything", "ls *", ro=True), R("echo a; echo b", "echo *", ro=True),
    R("true && false || echo c"), R("time pytest -q"), R("env FOO=1 pytest"), R("timeout 60 pytest -q"),
    R("xargs -n1 echo < list.txt"), R("find . -name x -exec cat {} \\;"), R("bash -c 'ls -la'"),
    R("git -C sub status", None), R("nohup make &"), R("diff -u a.txt b.txt", "diff *", ro=True),
    R('echo "quoted \\"x\\""', "echo *", ro=True), R("echo 'it'\\''s'", "echo *", ro=True),
    W("echo x>f"), R("! grep -q x f", "grep *", ro=True), R("(cd sub && make)"),
    R("{ ls; pwd; }", ro=True), R("ls && ls -a", "ls *", ro=True), R('cat <<< "hello"', "cat *", ro=True),
    R("wc -l < input.txt", "wc *", ro=True), R("ls 2>&1 | head -3", ro=True), R("ls >&2", "ls *", ro=True),
    R("ls &>/dev/null", "ls *", ro=True), W("git diff > changes.patch"),
    R("cat <<EOF\nplain text\nEOF", "cat *", ro=True), R("cat <<-EOF\n\tindented\n\tEOF", "cat *", ro=True),
    R("echo } { ]", "echo *", ro=True), R("echo a#b", "echo *", ro=True), R("grep -E 'a|b' f", "grep *", ro=True),
    R('grep "x;y" f', "grep *", ro=True), R("ls -- -x", "ls *", ro=True), R("python3 -c 'print(1)'"),
    R("git add -A && git commit -m wip"), R("mkdir -p build && cd build"), R("rm -rf build"),
    R("npx tsc --noEmit"), R("cargo test -- --nocapture"), R("docker ps"),
    R("cat <<'EOF' | python -\nimport sys\nprint(sys.argv)\nEOF"), W("echo a2>f"),
    R("ls | grep -v x | wc -l", ro=True), R("git stash list"), R("uname -a && whoami", ro=True),
    R("pwd", "pwd *", ro=True), R("echo 'a b' \"c d\" e\\ f", "echo *", ro=True),
    R("ls *.md", "ls *", ro=True), W("cat a.txt b.txt > c.txt"), W("echo hi >> log.txt"),
    R("sleep 1 && echo done"), R("kill -0 1"), R("echo $'line\\n'", "echo *", ro=True),
    R("grep -rn 'def main' --include='*.py' .", "grep *", ro=True), R("git branch -a"),
    R("ls -la\nls -a", "ls *", ro=True), R("exec 2>/dev/null; ls"),
]  # fmt: skip

CASES: list[Case] = ISSUE_VARIANTS + EXPANSIONS_AND_SHAPES + PARSE_ERRORS_AND_SHELLS + EARLIER_ROUNDS + ORDINARY

# grants a session might hold: every read-only name (what "allow for this session" gives for them)
READ_ONLY_GRANTS = ["ls *", "cat *", "echo *", "grep *", "head *", "wc *", "find *", "sed *", "git status *",
                    "git log *", "git diff *", "printf *", "pwd *", "true *", "rg *", "tar *", "du *", "diff *"]

__all__ = ["CASES", "EXACT", "READ_ONLY_GRANTS", "Case"]
