"""The vLLM options of the command line: a server takes vLLM's own session limit, the rest keep a small one."""

from __future__ import annotations

import pytest

from voxdesk.cli.main import build_parser
from voxdesk.engine.vllm_engine import DESKTOP_MAX_NUM_SEQS


def test_serve_leaves_max_num_seqs_to_vllm_and_transcribe_keeps_the_desktops() -> None:
    parser = build_parser()
    assert parser.parse_args(["serve", "--engine", "vllm"]).max_num_seqs is None
    assert parser.parse_args(["transcribe", "--engine", "vllm", "a.wav"]).max_num_seqs == DESKTOP_MAX_NUM_SEQS
    assert parser.parse_args(["serve", "--max-num-seqs", "512"]).max_num_seqs == 512


def test_serve_help_names_both_defaults(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["serve", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "vLLM's own for a server" in text
    assert f"the desktop's in-process engine uses {DESKTOP_MAX_NUM_SEQS}" in text
