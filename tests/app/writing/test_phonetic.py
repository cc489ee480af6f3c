"""The sound-alike key: spellings that sound alike get one key, or keys one sound apart."""

from __future__ import annotations

import pytest

from voxdesk.app.writing.phonetic import letters, sound_key


@pytest.mark.parametrize(
    ("spelling", "key"),
    [
        ("Xochitl", "SAXATL"),
        ("Zacha tool", "SAXATAL"),
        ("Kubernetes", "KAPARNATAS"),
        ("koo ber net eez", "KAPARNATAS"),
        ("knight", "NAT"),
        ("night", "NAT"),
        ("flare", "FLAR"),
        ("flair", "FLAR"),
        ("philosophy", "FALASAFA"),
        ("cello", "SALA"),
        ("judge", "JAJ"),
        ("ahead", "AHAT"),
        ("Siobhan", "SAPAN"),
        ("thing", "0ANK"),
        ("Zoë", "SA"),
        ("", ""),
    ],
)
def test_keys(spelling: str, key: str) -> None:
    assert sound_key(spelling) == key


def test_letters_drop_accents_case_spaces_and_punctuation() -> None:
    assert letters("Zoë's Café-Bar 2") == "zoescafebar"
