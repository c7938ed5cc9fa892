"""Within one conversation the contrast reading links nothing
(memlattice.core.statements.contrast): a few turns on, another value of the same kind
is mostly another option or item under discussion, even where both are named."""

from __future__ import annotations

import pytest

from memlattice.core.statements.contrast import Profile, contrast, profile


def read(text: str, speaker: str | None = "ops") -> Profile:
    return profile(text, speaker=speaker)


@pytest.mark.parametrize(("older", "newer"), [
    ("ledgerd serves its API on port 8080.", "ledgerd's API moved to port 8081."),
    ("The weekly sync with design is on Tuesdays.", "We moved the weekly sync with design"
                                                     " to Thursdays."),
])
def test_a_new_value_that_does_not_name_the_old_links_only_across_conversations(
        older: str, newer: str) -> None:
    across = contrast(read(older), read(newer), same_source=True)
    assert across is not None and across.kind == "update"
    assert contrast(read(older), read(newer), same_source=True, same_conversation=True) is None


@pytest.mark.parametrize(("older", "newer"), [
    ("ledgerd serves its API on port 8080.", "ledgerd's API port changed from 8080 to 8081."),
    ("ledgerd serves its API on port 8080.", "sorry, typo: ledgerd's API port is 8081,"
                                              " not 8080."),
])
def test_within_a_conversation_even_a_change_that_names_the_old_value_links_nothing(
        older: str, newer: str) -> None:
    across = contrast(read(older), read(newer), same_source=True)
    assert across is not None and across.kind == "update"
    assert contrast(read(older), read(newer), same_source=True, same_conversation=True) is None
