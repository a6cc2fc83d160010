from dsh_notebook.client.summary import summarize_result


def test_a_failing_command_leads_with_its_exit_code() -> None:
    text = "ok   add(2, 3) = 5\nFAIL subtract(7, 4)\n2 of 6 tests failed\n[exit code: 1]"
    assert summarize_result(text) == "[exit code 1] ok   add(2, 3) = 5 (+2 lines)"


def test_a_zero_exit_is_not_repeated_and_empty_output_is_named() -> None:
    assert summarize_result("all 6 tests passed\n[exit code: 0]") == "all 6 tests passed"
    assert summarize_result("[exit code: 0]") == "(no output)"
    assert summarize_result("   ") == "(empty)"


def test_long_first_lines_are_truncated_to_the_width() -> None:
    out = summarize_result("x" * 300 + "\nsecond", width=50)
    assert out.startswith("x" * 49 + "…") and out.endswith("(+1 lines)")
