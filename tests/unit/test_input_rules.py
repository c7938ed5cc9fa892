"""The input rules of memlattice.core.names, json_values and vector_checks, without I/O."""

from __future__ import annotations

import pytest

from memlattice.core.errors import ValidationError
from memlattice.core.json_values import json_problem, unwritable
from memlattice.core.names import blank, name_problem, require_name
from memlattice.core.vector_checks import vector_problem


@pytest.mark.parametrize("name", ["team", "a b", "Équipe d'été", "東京", "🙂", "x\u00a0y",
                                  "\ue000private", "user.pref:color-1"])
def test_names_that_pass(name: str) -> None:
    assert name_problem(name) is None


@pytest.mark.parametrize("name", ["", " ", "\t", "\u00a0", "\u200b", " a", "a ", "a\n",
                                  "a\u0000b", "a\u007fb", "a\u0085b", "a\u202eb", "a\u2066b",
                                  "a\u200db", "a\ufeffb", "a\u2028b", "a\u2029b", "a\ud800b",
                                  "a\u0378b", "a\ufffeb"])
def test_names_that_fail(name: str) -> None:
    assert name_problem(name) is not None
    with pytest.raises(ValidationError) as caught:
        require_name(name, "taskId")
    assert caught.value.details["field"] == "taskId"


def test_blank_is_about_visibility() -> None:
    assert blank(" \t\n\u200b\u200e\u00a0\u3000")
    assert not blank(" . ")


def test_unwritable_json_is_found_with_its_path() -> None:
    assert unwritable({"a": [1, {"b": float("nan")}]})[0] == "a.1.b"  # type: ignore[index]
    assert unwritable(float("-inf")) == ("", "NaN or infinity (JSON has no such number)")
    assert json_problem({"x": ["ok", "a\ud800"]}) == (
        "a lone surrogate (not Unicode text) at x.1")
    assert json_problem({"\udfff": 1}) is not None
    assert json_problem({"a": [1e308, -0.0, 1e-320, "NaN", None, True, "🙂"]}) is None
    deep: object = 1.0
    for _ in range(5000):
        deep = [deep]
    assert json_problem(deep) is None


def test_a_vector_is_checked_whole_and_its_bad_number_still_named() -> None:
    vector = [0.5] * 1024
    assert unwritable({"embedding": vector}) is None
    vector[700] = float("nan")
    assert unwritable({"embedding": vector}) == (
        "embedding.700", "NaN or infinity (JSON has no such number)")
    assert unwritable({"embedding": (0.5, float("inf"))})[0] == "embedding.1"  # type: ignore[index]
    assert unwritable({"v": [0.5, 1, "a\ud800"]})[0] == "v.2"  # type: ignore[index]


@pytest.mark.parametrize("vector", [[1.0, 0.0], [-0.0, 1e-3], [1e19, 0.0], [1e-19, 1e-19]])
def test_vectors_that_pass(vector: list[float]) -> None:
    assert vector_problem(vector) is None


@pytest.mark.parametrize("vector", [[0.0, 0.0], [-0.0, 0.0], [1e39, 0.0], [1e-60, 1e-60],
                                    [float("nan"), 1.0], [float("inf"), 1.0], [1e20, 1e20],
                                    [3e38, 0.0]])
def test_vectors_that_fail(vector: list[float]) -> None:
    """3e38 fits float32, but its square does not: the float32 norm is infinite."""
    assert vector_problem(vector) is not None
