import pytest

from tfyarn._flags import to_flags


@pytest.mark.parametrize(
    "options, want",
    [
        ({"worker": "2x1c,2g"}, ["--worker=2x1c,2g"]),
        ({"nproc_per_node": 2}, ["--nproc-per-node=2"]),
        ({"mlflow": True}, ["--mlflow"]),
        ({"local": False, "queue": None}, []),
        ({"files": ["a.csv", "b.csv"]}, ["--files=a.csv", "--files=b.csv"]),
        ({"setenv": {"A": "1", "B": "x=y"}}, ["--setenv=A=1", "--setenv=B=x=y"]),
        ({"python": "-weird"}, ["--python=-weird"]),
    ],
)
def test_keywords_are_flags(options, want):
    assert to_flags(options) == want
