"""docs/python.md's claims that the unit tests hold (the rest are held by the tests named there)."""

import os
import re

import tfyarn
from tfyarn import _view
from tfyarn._flags import to_flags

DOC = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "docs", "python.md")


def doc():
    with open(DOC) as f:
        return f.read()


def test_error_table_matches_the_classes():
    rows = dict(re.findall(r"^\| `tfyarn\.(\w+)` \| (.*) \|$", doc(), re.M))
    assert set(rows) == {"UsageError", "JobFailed", "TaskError", "BinaryError"}
    for name in rows:
        assert issubclass(getattr(tfyarn, name), tfyarn.Error)
    assert "a `JobFailed` too" in rows["TaskError"] and issubclass(tfyarn.TaskError, tfyarn.JobFailed)


def test_flag_mapping_sentence():
    text = " ".join(doc().split())
    assert "(`nproc_per_node=2` is `--nproc-per-node=2`)" in text
    assert to_flags({"nproc_per_node": 2}) == ["--nproc-per-node=2"]
    assert '(`setenv={"A": "1"}`)' in text and to_flags({"setenv": {"A": "1"}}) == ["--setenv=A=1"]


def test_live_false_is_plain():
    assert "(or with `live=False`)" in " ".join(doc().split())
    assert isinstance(_view.make_view(live=False), _view.PlainView)


def test_binary_order_sentence():
    text = " ".join(doc().split())
    assert "the binary `TFYARN_BINARY` names, the one its wheel installed, or `tfyarn` on `PATH`" in text
