"""doc_ref completion from the `DocRefs` index ranks and counts as ranking every doc_ref does."""

from __future__ import annotations

import random

import pytest

from dpe_server.catalog.folder import doc_ref_for
from dpe_server.read import completion
from dpe_server.read.completion import FUZZY_RANKED, MAX_VALUES, DocRefs, rank

WORDS = ("budget", "report", "revenue", "plan", "deck", "2024", "north", "q3", "élan", "数据")


def _catalog(n: int, seed: int) -> dict[str, str]:
    rng = random.Random(seed)
    titles: dict[str, str] = {}
    for i in range(n):
        name = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 4)))
        rel = f"dir{i % 7}/{name} {i}.{rng.choice(['pdf', 'xlsx', 'docx', 'pptx'])}"
        titles[doc_ref_for(rel)] = name.title() if rng.random() < 0.5 else f"Title\t{name}"
    return titles


@pytest.mark.parametrize("chunk", [4_096, 7])  # lines filtered and joined at a time
def test_values_and_totals_are_those_of_a_full_ranking(
    chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(completion, "_CHUNK", chunk)
    titles = _catalog(1500, seed=3)
    index = DocRefs(titles.items())
    flat = {ref: title.replace("\t", " ") for ref, title in titles.items()}
    typed_values = ["", "b", "bu", "budg", "rpt", "q3", "QUAR", "xyz", "é", "数", "n-", "9", "t r"]
    typed_values += [ref[:4] for ref in list(titles)[:5]]
    # long values, and values whose characters few lines hold: the pattern is tried only on
    # the lines holding every letter and digit typed
    typed_values += [ref[:k] for ref in list(titles)[5:10] for k in (9, len(ref))]
    typed_values += [ref[2:] for ref in list(titles)[10:13]]
    typed_values += ["budget report 2024", "rvn24", "n3 q", "élan 数据", "plan-1", "dk2"]
    typed_values += ["revenue deck", "d9", "\t", "\n", "a\tb", "n\n", " ", "-"]
    for typed in typed_values:
        expected = rank(typed, flat, flat)
        done = index.complete(typed)
        values, total = done.values, done.total
        assert values == expected[:MAX_VALUES], typed
        if sum(ref.startswith(typed.lower()) for ref in titles) >= MAX_VALUES:
            assert done.has_more == (len(expected) > MAX_VALUES)  # a lower bound of the total:
            assert MAX_VALUES + done.has_more <= total <= len(expected)  # the prefix matches
        else:
            assert total == len(expected), typed
            assert done.has_more == (total > MAX_VALUES)


@pytest.mark.parametrize("others", [0, 1, 3000])
def test_exactly_a_page_of_prefix_matches_ranks_no_fuzzy_match(others: int) -> None:
    """100 doc_refs start with what is typed: they are the values, and the fuzzy matches are
    only looked for to say whether there are more (not ranked: none would be shown)."""
    refs = {f"xlsx-012{i:02d}": f"Book {i}" for i in range(MAX_VALUES)}
    refs |= {f"a-xlsx-012-{i:05d}": f"Other {i}" for i in range(others)}
    refs |= {f"pptx-999{i:02d}": "Unrelated" for i in range(50)}
    done = DocRefs(refs.items()).complete("xlsx-012")
    assert done.values == sorted(r for r in refs if r.startswith("xlsx-012"))
    assert done.has_more == bool(others)
    assert done.total == MAX_VALUES + min(others, 1)


def test_special_characters_typed_are_taken_literally() -> None:
    index = DocRefs({"a-b-123456": "Plan [draft] (v2) .*", "c-654321": "Other"}.items())
    assert index.complete("[d").values == ["a-b-123456"]
    assert index.complete(".*").values == ["a-b-123456"]
    assert index.complete("\\").total == 0


def test_many_matches_are_bounded_and_say_there_are_more() -> None:
    refs = {f"{'ab'[i % 2]}x-{i:06d}": f"Doc {i}" for i in range(2 * FUZZY_RANKED + 10)}
    index = DocRefs(refs.items())
    by_prefix = index.complete("a")
    assert by_prefix.has_more
    assert by_prefix.values == sorted(r for r in refs if r.startswith("a"))[:MAX_VALUES]
    fuzzy = index.complete("x0")  # in every doc_ref, none starts with it
    assert fuzzy.has_more
    assert fuzzy.total == FUZZY_RANKED
    assert len(fuzzy.values) == MAX_VALUES
