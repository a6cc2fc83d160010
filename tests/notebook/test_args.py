"""Flag parsing and ``{name}`` interpolation of the ``%dsh`` line (pure functions)."""

from __future__ import annotations

import pytest

from dsh_notebook.cmdline.dsh_line import FLAGS, parse_line
from dsh_notebook.cmdline.help import help_text, subcommand_lines
from dsh_notebook.errors import UserError
from dsh_notebook.notebook.magic.interpolate import interpolate


def test_free_text_keeps_quotes_apostrophes_and_spacing() -> None:
    args = parse_line("""--new what's in "my file"?  it's   $HOME and `x` """)
    assert args.new is True
    assert args.text == """what's in "my file"?  it's   $HOME and `x`"""
    assert args.command == "prompt"


def test_flag_values_separate_equals_and_quoted() -> None:
    args = parse_line('--model deepseek:deepseek-chat --cwd "/tmp/a b" --approve=deny --base-url=http://h:1/v1 hi')
    assert (args.model, args.cwd, args.approve, args.base_url) == ("deepseek:deepseek-chat", "/tmp/a b", "deny", "http://h:1/v1")
    assert args.text == "hi"
    assert args.given == {"model", "cwd", "approve", "base_url"}


def test_flags_stop_at_first_word_and_later_dashes_are_text() -> None:
    args = parse_line("--bg explain --new and --model please")
    assert args.bg and not args.new and args.model is None
    assert args.text == "explain --new and --model please"


def test_double_dash_ends_flags_and_disables_subcommands() -> None:
    assert parse_line("-- --new is a flag").text == "--new is a flag"
    args = parse_line("-- show me")
    assert args.command == "prompt" and args.text == "show me"
    assert parse_line("--steer -- stop").text == "stop"


def test_single_dash_text_is_a_prompt() -> None:
    assert parse_line("-1 is odd?").text == "-1 is odd?"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("--modle x hi", "unknown flag --modle"),
        ("--approve maybe hi", "must be one of auto, ask, deny"),
        ("--model", "needs a value"),
        ("--new=1 hi", "takes no value"),
        ("--cwd 'unclosed hi", "unclosed"),
        ("--new --session s_1 hi", "exclude each other"),
        ("--new", "empty prompt"),
        ("", "empty prompt"),
    ],
)
def test_bad_lines_are_user_errors(line: str, message: str) -> None:
    with pytest.raises(UserError) as info:
        parse_line(line)
    assert message in info.value.message
    assert info.value.code in ("BAD_FLAG", "EMPTY_PROMPT")


def test_subcommands_only_as_whole_lines() -> None:
    assert parse_line("stop").command == "stop"
    assert parse_line("sessions").command == "sessions"
    assert parse_line("config").command == "config"
    assert (parse_line("resume").command, parse_line("resume").target) == ("resume", None)  # this notebook's
    resume = parse_line("resume s_0123456789ab")
    assert (resume.command, resume.target) == ("resume", "s_0123456789ab")
    show = parse_line("show --inspect s_1")
    assert (show.command, show.target, show.inspect) == ("show", "s_1", True)
    assert parse_line("--no-widget show").no_widget
    assert parse_line("show").target is None
    assert parse_line("show me the code").command == "prompt"
    assert parse_line("stop the build please").command == "prompt"
    assert parse_line("sessions are great").text == "sessions are great"


def test_a_trailing_semicolon_silences_a_subcommand_line_and_is_no_word_of_it() -> None:
    """``%dsh sessions;`` (IPython's ``;`` after a line, ``@output_can_be_silenced``) is the sessions
    view, silenced, not the prompt "sessions;" sent to the model."""
    assert parse_line("sessions;").command == "sessions"
    show = parse_line("show --stats s_1 ;")
    assert (show.command, show.target, show.stats) == ("show", "s_1", True)
    assert parse_line("mcp;").command == "mcp" and parse_line("mcp;").text == ""
    assert parse_line("policy check;").command == "policy check"
    assert (parse_line("tell me a joke;").command, parse_line("tell me a joke;").text) == ("prompt", "tell me a joke;")


def test_cell_body_is_the_prompt_and_line_text_prefixes_it() -> None:
    args = parse_line("--session s_1", "line one\nline 'two'\n")
    assert args.session == "s_1" and args.text == "line one\nline 'two'"
    assert parse_line("about:", "the body").text == "about:\nthe body"
    assert parse_line("stop", "not a subcommand with a body").command == "prompt"
    assert parse_line("stop", "   \n").command == "stop"


def test_help_flag_and_help_text_lists_every_flag_and_subcommand() -> None:
    assert parse_line("--help").command == "help"
    assert parse_line("-h").command == "help"
    text = help_text()
    for spec in FLAGS:
        assert spec.name in text
    for usage, _ in subcommand_lines():
        assert f"%dsh {usage}" in text
    assert "Examples:" in text and "%%dsh" in text and "--no-interpolate" in text


def test_interpolation_names_attributes_and_escapes() -> None:
    class Frame:
        shape = (3, 4)

    ns = {"name": "Ada", "df": Frame(), "n": 7}
    assert interpolate("hi {name}, {n}+1", [ns]) == "hi Ada, 7+1"
    assert interpolate("shape {df.shape}", [ns]) == "shape (3, 4)"
    assert interpolate("{{name}} and {{ }}", [ns]) == "{name} and { }"
    assert interpolate('json {"a": 1} and f() { return 1 }', [ns]) == 'json {"a": 1} and f() { return 1 }'
    assert interpolate("{name}", [{"name": "local"}, ns]) == "local"  # local scope first


def test_interpolation_missing_name_is_a_clear_error() -> None:
    with pytest.raises(UserError) as info:
        interpolate("use {missing} here", [{"x": 1}])
    assert info.value.code == "UNKNOWN_VARIABLE"
    assert "{missing}" in info.value.message and "--no-interpolate" in info.value.message
    with pytest.raises(UserError) as attr:
        interpolate("{x.nope}", [{"x": 1}])
    assert "no attribute 'nope'" in attr.value.message


def test_fork_and_compare_lines_are_subcommands_with_their_own_options() -> None:
    fork = parse_line("fork s_0123456789ab --at 12")
    assert (fork.command, fork.target, fork.options) == ("fork", "s_0123456789ab", {"at": "12"})
    assert parse_line("fork --at=3").options == {"at": "3"} and parse_line("fork --at=3").target is None
    with pytest.raises(UserError) as missing:
        parse_line("fork s_0123456789ab")
    assert missing.value.code == "BAD_FLAG" and "--at SEQ" in missing.value.message
    with pytest.raises(UserError):
        parse_line("fork --at")
    assert parse_line("fork the repository and clean it up").command == "prompt"
    cmp = parse_line("compare s_aaaaaaaaaaaa s_bbbbbbbbbbbb")
    assert (cmp.command, cmp.targets) == ("compare", ["s_aaaaaaaaaaaa", "s_bbbbbbbbbbbb"])
    assert parse_line("compare both").command == "prompt"
    assert parse_line("compare a.py with b.py please").command == "prompt"
    assert parse_line("-- compare a b").command == "prompt"
    assert "fork [ID] --at SEQ" in help_text() and "compare A B" in help_text()


def test_subcommand_words_that_name_sessions_are_a_usage_error_not_a_prompt() -> None:
    for line, needs in [("compare s_0123456789ab", "got only s_0123456789ab"), ("compare {a}", "got only {a}"),
                        ("compare x.jsonl", "got only x.jsonl"), ("compare s_a s_b s_c", "takes 2 session ids, not 3"),
                        ("fork s_a s_b --at 2", "takes one session id, not 2"), ("fork the first turn --at 2", "fork [ID] --at SEQ"),
                        ("show s_a s_b", "takes one session id"), ("stop s_abc", "%dsh --session ID stop")]:
        with pytest.raises(UserError, match="BAD_FLAG") as caught:
            parse_line(line)
        assert needs in str(caught.value), line
    for prompt in ("compare a b c", "show me the code", "stop it", "fork the repository and clean it up"):
        assert parse_line(prompt).command == "prompt", prompt


def test_a_break_flag_that_names_no_stage_is_a_bad_flag() -> None:
    from dsh_notebook.cmdline.checks import stages as parse_stages

    for text in (",", " , ", ",,"):
        with pytest.raises(UserError, match="names no stage"):
            parse_stages(text)
    assert parse_stages("3,03") == ["03"] and parse_stages("ALL") == ["01", "02", "03", "04", "05", "06"]


def test_show_only_flags_on_a_prompt_are_a_bad_flag_not_a_prompt() -> None:
    for line in ("--stats hello there", "--inspect what happened?", "--present the loop"):
        with pytest.raises(UserError, match="goes with show"):
            parse_line(line)
    assert parse_line("show --stats").stats and parse_line("--no-widget hello").text == "hello"


def test_show_present_is_a_flag_of_show() -> None:
    args = parse_line("show --present")
    assert args.command == "show" and args.present and not args.inspect
    args = parse_line("show --inspect --present s_0123456789ab")
    assert args.present and args.inspect and args.target == "s_0123456789ab"
    assert not parse_line("show").present
