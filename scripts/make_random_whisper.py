"""Build random-weight CTranslate2 Whisper models that faster-whisper loads, offline.

Usage: ``python scripts/make_random_whisper.py OUTDIR [--tiny-en DIR] [--tiktoken FILE]``
(needs torch, transformers and ctranslate2, which the vLLM test environment has). It writes:

- ``OUTDIR/base.en`` and ``OUTDIR/small.en``: English-only models with the real base and
  small dimensions, so a bigger model's decode cost is real while its text is meaningless.
  Their vocabulary, tokenizer and token suppression lists are the bundled tiny.en model's.
- ``OUTDIR/tiny``: a multilingual model of tiny size (99 languages, ``<|translate|>``), so
  language detection, language tokens and translation run for real. Whisper's multilingual
  vocabulary is ``whisper/assets/multilingual.tiktoken`` from the openai-whisper source
  package on PyPI; without ``--tiktoken`` the script fetches that package with pip.

A model hub is never contacted: each model is a ``transformers`` Whisper with random weights
(seeded), saved locally and converted by CTranslate2's ``TransformersConverter`` to int8.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

OPENAI_WHISPER = "openai-whisper==20250625"
ENGLISH_VOCAB, MULTILINGUAL_VOCAB = 51864, 51865
TIMESTAMPS = 1501  # <|0.00|> to <|30.00|>
# The 99 languages of the multilingual Whisper models before large-v3, in token order.
LANGUAGES = (
    "en", "zh", "de", "es", "ru", "ko", "fr", "ja", "pt", "tr", "pl", "ca", "nl", "ar", "sv", "it", "id", "hi",
    "fi", "vi", "he", "uk", "el", "ms", "cs", "ro", "da", "hu", "ta", "no", "th", "ur", "hr", "bg", "lt", "la",
    "mi", "ml", "cy", "sk", "te", "fa", "lv", "bn", "sr", "az", "sl", "kn", "et", "mk", "br", "eu", "is", "hy",
    "ne", "mn", "bs", "kk", "sq", "sw", "gl", "mr", "pa", "si", "km", "sn", "yo", "so", "af", "oc", "ka", "be",
    "tg", "sd", "gu", "am", "yi", "lo", "uz", "fo", "ht", "ps", "tk", "nn", "mt", "sa", "lb", "my", "bo", "tl",
    "mg", "as", "tt", "haw", "ln", "ha", "ba", "jw", "su",
)  # fmt: skip
# Whisper's tokenizer splits text with GPT-2's pattern.
PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""


@dataclass(frozen=True)
class Size:
    """Transformer dimensions of one Whisper size."""

    width: int
    layers: int
    heads: int


SIZES = {"tiny": Size(384, 4, 6), "base": Size(512, 6, 8), "small": Size(768, 12, 12)}
MODELS = {"base.en": ("base", False), "small.en": ("small", False), "tiny": ("tiny", True)}
"""Folder name -> (size, multilingual) of every model the script builds."""


def specials() -> list[str]:
    """Multilingual Whisper's special tokens after the 50257 byte-pair tokens, in id order."""
    return [
        "<|endoftext|>",
        "<|startoftranscript|>",
        *[f"<|{code}|>" for code in LANGUAGES],
        "<|translate|>",
        "<|transcribe|>",
        "<|startoflm|>",
        "<|startofprev|>",
        "<|nocaptions|>",
        "<|notimestamps|>",
        *[f"<|{i * 0.02:.2f}|>" for i in range(TIMESTAMPS)],
    ]


def multilingual_tokenizer(tiktoken_file: Path, out: Path) -> None:
    """Write ``tokenizer.json`` for multilingual Whisper from its tiktoken byte-pair ranks."""
    from transformers.convert_slow_tokenizer import TikTokenConverter

    tokenizer = TikTokenConverter(
        vocab_file=str(tiktoken_file), pattern=PATTERN, extra_special_tokens=specials()
    ).converted()
    size = tokenizer.get_vocab_size(with_added_tokens=True)
    if size != MULTILINGUAL_VOCAB:
        raise SystemExit(f"{tiktoken_file}: {size} tokens with the specials, expected {MULTILINGUAL_VOCAB}")
    tokenizer.save(str(out / "tokenizer.json"))


def fetch_tiktoken(folder: Path) -> Path:
    """``multilingual.tiktoken`` from the openai-whisper source package, fetched with pip."""
    pip = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:"]
    subprocess.run([*pip, "-d", str(folder), OPENAI_WHISPER], check=True)
    (archive,) = folder.glob("openai_whisper-*.tar.gz")
    with tarfile.open(archive) as tar:
        member = next(m for m in tar.getmembers() if m.name.endswith("whisper/assets/multilingual.tiktoken"))
        member.name = "multilingual.tiktoken"
        tar.extract(member, folder, filter="data")
    return folder / "multilingual.tiktoken"


def save_random_transformers_model(size: Size, vocab: int, folder: Path) -> None:
    """A ``WhisperForConditionalGeneration`` with seeded random weights, saved to ``folder``."""
    import torch
    from transformers import WhisperConfig, WhisperForConditionalGeneration

    eot = 50256 if vocab == ENGLISH_VOCAB else 50257  # <|endoftext|>; <|startoftranscript|> follows it
    torch.manual_seed(0)
    config = WhisperConfig(
        vocab_size=vocab,
        num_mel_bins=80,
        d_model=size.width,
        encoder_layers=size.layers,
        decoder_layers=size.layers,
        encoder_attention_heads=size.heads,
        decoder_attention_heads=size.heads,
        encoder_ffn_dim=4 * size.width,
        decoder_ffn_dim=4 * size.width,
        max_source_positions=1500,
        max_target_positions=448,
        bos_token_id=eot,
        eos_token_id=eot,
        pad_token_id=eot,
        decoder_start_token_id=eot + 1,
    )
    WhisperForConditionalGeneration(config).save_pretrained(folder)


def build(out: Path, name: str, tiny_en: Path, tiktoken_file: Path | None) -> Path:
    """Build the model ``name`` (a key of :data:`MODELS`) into ``out / name``; returns that folder."""
    import ctranslate2

    size_name, multilingual = MODELS[name]
    target = out / name
    with tempfile.TemporaryDirectory() as scratch:
        hf = Path(scratch)
        if multilingual:
            assert tiktoken_file is not None
            multilingual_tokenizer(tiktoken_file, hf)
        else:
            shutil.copy(tiny_en / "tokenizer.json", hf)
        (hf / "tokenizer_config.json").write_text(json.dumps({"tokenizer_class": "WhisperTokenizerFast"}))
        save_random_transformers_model(SIZES[size_name], MULTILINGUAL_VOCAB if multilingual else ENGLISH_VOCAB, hf)
        converter = ctranslate2.converters.TransformersConverter(str(hf), copy_files=["tokenizer.json"])
        converter.convert(str(target), quantization="int8", force=True)
    _set_token_config(target, tiny_en, multilingual)
    return target


def _set_token_config(target: Path, tiny_en: Path, multilingual: bool) -> None:
    """Language ids and suppressed tokens, which the converter cannot take from a bare tokenizer."""
    config_path = target / "config.json"
    config = json.loads(config_path.read_text())
    if multilingual:
        vocabulary = json.loads((target / "vocabulary.json").read_text())
        config["lang_ids"] = [vocabulary.index(f"<|{code}|>") for code in LANGUAGES]
        config["suppress_ids"] = []
        config["suppress_ids_begin"] = [220, vocabulary.index("<|endoftext|>")]
    else:
        english = json.loads((tiny_en / "config.json").read_text())
        for key in ("lang_ids", "suppress_ids", "suppress_ids_begin"):
            config[key] = english[key]
    config_path.write_text(json.dumps(config, indent=1))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="folder to write the models into")
    parser.add_argument("--tiny-en", type=Path, required=True, help="the bundled tiny.en model folder")
    parser.add_argument("--tiktoken", type=Path, help="whisper/assets/multilingual.tiktoken (default: fetch it)")
    parser.add_argument("--only", choices=MODELS, action="append", help="build only this model (repeatable)")
    args = parser.parse_args(argv)
    names = args.only or list(MODELS)
    with tempfile.TemporaryDirectory() as scratch:
        tiktoken_file = args.tiktoken
        if tiktoken_file is None and any(MODELS[name][1] for name in names):
            tiktoken_file = fetch_tiktoken(Path(scratch))
        for name in names:
            print(f"random-weight Whisper {name} in {build(args.out, name, args.tiny_en, tiktoken_file)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
