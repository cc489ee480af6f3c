"""settings.toml holding any bytes: loading never raises, what cannot be read keeps its default,
and a file that cannot be read is named and kept aside byte for byte."""

from __future__ import annotations

import dataclasses
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import tomli_w
from hypothesis import example, given, settings
from hypothesis import strategies as st

from voxdesk.app.settings import Settings, load_settings, save_settings

_SECTIONS = [f.name for f in dataclasses.fields(Settings())]
# Names getattr finds on the settings objects although they are no setting: each must be refused.
_NAMES = sorted(set(_SECTIONS) | set(dir(Settings())) | {n for s in _SECTIONS for n in dir(getattr(Settings(), s))})

_scalars = st.one_of(
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(),
    st.text(max_size=20),
    st.datetimes(),
)
_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
_names = st.sampled_from(_NAMES) | st.text(max_size=10)
_documents = st.dictionaries(_names, st.dictionaries(_names, _values, max_size=4) | _values, max_size=5).map(
    lambda data: tomli_w.dumps(data).encode()
)


@contextmanager
def _settings_file(raw: bytes) -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "settings.toml"
        path.write_bytes(raw)
        yield path


def _mutated(raw: bytes, edits: list[tuple[int, bytes]]) -> bytes:
    for position, replacement in edits:
        at = position % (len(raw) + 1)
        raw = raw[:at] + replacement + raw[at + len(replacement) :]
    return raw


def _check_load(raw: bytes) -> None:
    with _settings_file(raw) as path:
        loaded, warnings = load_settings(path)  # never raises, whatever the bytes
        for section in dataclasses.fields(Settings()):
            for key in dataclasses.fields(getattr(Settings(), section.name)):
                value = getattr(getattr(loaded, section.name), key.name)
                assert type(value) is type(getattr(getattr(Settings(), section.name), key.name)), (section, key)
        copies = list(path.parent.glob("settings.toml.damaged-*"))
        if copies:  # not all of it could be read: the user is told which file, and where its copy is
            [copy] = copies
            assert copy.read_bytes() == raw
            assert str(path) in warnings[0] and str(copy) in warnings[0]
        assert all(isinstance(w, str) and "\n" not in w for w in warnings)


@settings(max_examples=100, deadline=None)  # a loaded machine pauses now and then
@given(st.binary(max_size=600))
@example(b"\xff\xfe\x00garbage")
@example(b"x = " + b"[" * 5000)  # deeper than the TOML parser's recursion allows
def test_any_bytes_load_to_settings_without_an_exception(raw: bytes) -> None:
    _check_load(raw)


@settings(max_examples=100, deadline=None)  # a loaded machine pauses now and then
@given(st.lists(st.tuples(st.integers(min_value=0), st.binary(min_size=1, max_size=4)), min_size=1, max_size=6))
def test_a_saved_file_with_bytes_overwritten_loads_without_an_exception(edits: list[tuple[int, bytes]]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        raw = save_settings(Settings(), Path(folder) / "settings.toml").read_bytes()
    _check_load(_mutated(raw, edits))


@settings(max_examples=100, deadline=None)  # a loaded machine pauses now and then
@given(_documents)
@example(b"[__class__]\naudio = 1\n")
@example(b"[__dict__]\nx = 1\n")
@example(b'__module__ = { a = 1 }\n[engine]\n__class__ = "x"\n')
def test_any_toml_document_loads_without_an_exception(raw: bytes) -> None:
    _check_load(raw)


def test_unknown_names_that_are_attributes_are_ignored_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    path.write_text('[__class__]\naudio = 1\n[engine]\n__dict__ = 2\nserver_url = "ws://h:1"\n')
    loaded, warnings = load_settings(path)
    assert loaded.engine.server_url == "ws://h:1"
    assert warnings == ["ignored unknown setting [__class__]", "ignored unknown setting engine.__dict__"]


def test_values_nested_too_deeply_are_named_and_the_file_kept(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    path.write_bytes(b'[engine]\nserver_url = "ws://h:1"\nx = ' + b"[" * 5000)
    loaded, [warning] = load_settings(path)
    assert loaded == Settings()
    [copy] = tmp_path.glob("settings.toml.damaged-*")
    assert warning == (
        f"could not read {path} (values nested too deeply); using default settings; the damaged file is kept as {copy}"
    )
