"""`views.jsontext.dumps` writes exactly what `json.dumps(value, ensure_ascii=False, indent=2)`
writes (every JSON body of a read), and refuses what it refuses."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpe_server.views.jsontext import dumps
from tests.views.test_element_cap import scalars


def reference(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2)


keys = st.text() | st.integers() | st.booleans() | st.none() | st.floats(allow_nan=False)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.lists(inner, max_size=3).map(tuple)
        | st.dictionaries(keys, inner, max_size=4)
    ),
    max_leaves=30,
)


@settings(max_examples=400, deadline=None)
@given(values)
def test_the_same_text_as_json_dumps(value: object) -> None:
    assert dumps(value) == reference(value)


@pytest.mark.parametrize(
    "value",
    [
        {},
        [],
        (),
        {"a": {}, "b": [], "c": [{}], "d": [[], [[]]]},
        {3: "int key", 2.5: "float key", True: 1, False: 0, None: None},
        {"nan": math.nan, "inf": math.inf, "-inf": -math.inf, "-0": -0.0, "big": 10**30},
        {'quote"back\\slash': "tab\tnew\nline\u2028 中文 \x00 \ud800"},
        {"documents": [{"doc_ref": "a-1", "keywords": [], "indexing": True}], "total_count": 1},
    ],
)
def test_edge_cases(value: object) -> None:
    assert dumps(value) == reference(value)


def test_a_repeated_key_of_another_type_is_written_as_its_own() -> None:
    """Keys are remembered as written: "1" and 1 are both written `"1"`, True `"true"`."""
    value = [{"1": 1}, {1: 1}, {True: 1}, {"true": 1}]
    assert dumps(value) == reference(value)


@pytest.mark.parametrize("value", [{"a": {1, 2}}, [object()], {(1, 2): 3}, b"bytes"])
def test_what_json_refuses_is_refused(value: object) -> None:
    with pytest.raises(TypeError):
        reference(value)
    with pytest.raises(TypeError):
        dumps(value)
