"""One line per issue for the terminal (import_graph, rungraph, servegraph), and issues read back."""

from __future__ import annotations

from graphs.language import Issue, describe_issue


def test_an_issue_with_a_position_reads_like_a_compiler_message() -> None:
    issue = Issue("webhook.no-target", "error", "no target", node="root", step=2, step_name="fetch", line=12)
    assert describe_issue(issue, "chain.yaml") == (
        "chain.yaml:12:1: error: [webhook.no-target] no target (node=root step=fetch)"
    )


def test_an_unnamed_step_is_named_by_its_index_and_step_zero_is_shown() -> None:
    issue = Issue("switch.no-condition", "warning", "never chosen", node="pick", step=0, line=3, column=7)
    assert (
        describe_issue(issue, "g.yaml")
        == "g.yaml:3:7: warning: [switch.no-condition] never chosen (node=pick step=0)"
    )


def test_an_issue_without_position_or_node_names_only_the_source() -> None:
    assert describe_issue(Issue("load.empty", "error", "nothing"), "-") == "-: error: [load.empty] nothing"


def test_a_stored_issue_reads_back_as_the_same_issue() -> None:
    issue = Issue(
        "schema.type", "error", "bad", node="root", step=0, path="spec.nodes.root", line=4, column=5
    )
    assert Issue.from_dict(issue.to_dict()) == issue
    assert Issue.from_dict({"code": "c", "severity": "warning", "message": "m", "extra": 1}) == Issue(
        "c", "warning", "m"
    )
