"""Build a tiny random-weight Voxtral Realtime checkpoint that vLLM loads and runs on a CPU.

Usage: ``python scripts/make_tiny_voxtral.py OUTDIR`` (needs torch, safetensors and
mistral_common, which the vLLM test environment has). Nothing is downloaded.

The checkpoint has the real architecture (``VoxtralRealtimeGeneration``: causal Whisper
encoder, 4x downsampling adapter, ada-norm decoder) at toy size, about 0.9 M parameters, in
Mistral format: ``params.json``, ``consolidated.safetensors`` and ``tekken.json`` carrying
Voxtral's streaming audio settings (16 kHz, 80 ms per token, 480 ms delay). Its transcripts
are meaningless; vLLM's realtime mechanics on it are real. Weights are scaled so that greedy
output is visible text that follows the audio.
"""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

DIM, LAYERS, HEAD_DIM, HIDDEN, HEADS, KV_HEADS = 128, 2, 32, 256, 4, 2
ENC_DIM, ENC_HIDDEN, MEL_BINS, T_COND = 128, 256, 128, 32
NUM_SPECIAL, VOCAB = 128, 384  # 128 special tokens, then the 256 byte tokens
SPECIALS = [
    "<unk>", "<s>", "</s>", "[INST]", "[/INST]", "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]", "[TOOL_RESULTS]",
    "[/TOOL_RESULTS]", "[TOOL_CALLS]", "[IMG]", "<pad>", "[IMG_BREAK]", "[IMG_END]", "[PREFIX]", "[MIDDLE]",
    "[SUFFIX]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]", "[TOOL_CONTENT]", "[AUDIO]", "[BEGIN_AUDIO]", "[TRANSCRIBE]",
    "[ARGS]", "[CALL_ID]", "[THINK]", "[/THINK]", "[STREAMING_PAD]", "[STREAMING_WORD]",
]  # fmt: skip


def tekken() -> dict[str, object]:
    """A Tekken tokenizer file: byte-level vocabulary, Voxtral's specials and audio settings."""
    from importlib.resources import files

    bundled = json.loads((files("mistral_common") / "data" / "tekken_240911.json").read_text())
    specials = [{"rank": rank, "token_str": name, "is_control": True} for rank, name in enumerate(SPECIALS)]
    vocab = [
        {
            "rank": i,
            "token_bytes": base64.b64encode(bytes([i])).decode(),
            "token_str": chr(i) if 32 <= i < 127 else None,
        }
        for i in range(256)
    ]
    audio = {
        "sampling_rate": 16000,
        "frame_rate": 12.5,
        "audio_encoding_config": {"num_mel_bins": MEL_BINS, "hop_length": 160, "window_size": 400},
        "chunk_length_s": None,
        "transcription_format": "streaming",
        "transcription_delay_ms": 480,
        "streaming_look_ahead_ms": 2.5,
        "streaming_look_back_ms": 52.5,
        "streaming_n_left_pad_tokens": 32,
    }
    config = {
        "pattern": bundled["config"]["pattern"],
        "num_vocab_tokens": 256,
        "default_vocab_size": VOCAB,
        "default_num_special_tokens": NUM_SPECIAL,
        "version": "v13",
    }
    return {"config": config, "vocab": vocab, "special_tokens": specials, "audio": audio}


def params() -> dict[str, object]:
    """``params.json``: the text model plus the causal Whisper encoder and adapter."""
    mel = {"sampling_rate": 16000, "num_mel_bins": MEL_BINS, "hop_length": 160, "window_size": 400}
    encoder = {
        "audio_encoding_args": mel,
        "dim": ENC_DIM, "n_layers": LAYERS, "head_dim": HEAD_DIM, "hidden_dim": ENC_HIDDEN, "n_heads": HEADS,
        "vocab_size": VOCAB, "causal": True, "pos_embed": "rope", "sliding_window": 750,
    }  # fmt: skip
    return {
        "dim": DIM, "n_layers": LAYERS, "head_dim": HEAD_DIM, "hidden_dim": HIDDEN, "n_heads": HEADS,
        "n_kv_heads": KV_HEADS, "rope_theta": 1e6, "norm_eps": 1e-5, "vocab_size": VOCAB,
        "tied_embeddings": False, "ada_rms_norm_t_cond": True, "ada_rms_norm_t_cond_dim": T_COND,
        "causal": True, "use_biases": False, "max_position_embeddings": 4096,
        "multimodal": {"whisper_model_args": {"encoder_args": encoder, "downsample_args": {"downsample_factor": 4}}},
    }  # fmt: skip


def weights() -> dict[str, object]:
    """Random float32 tensors, scaled so greedy decoding emits printable text that varies."""
    import torch

    torch.manual_seed(0)
    tensors: dict[str, torch.Tensor] = {}

    def linear(name: str, out: int, inp: int, bias: bool = False) -> None:
        tensors[f"{name}.weight"] = torch.randn(out, inp) / inp**0.5
        if bias:
            tensors[f"{name}.bias"] = torch.zeros(out)

    prefix = "mm_streams_embeddings.embedding_module."
    encoder = prefix + "whisper_encoder."
    tensors[prefix + "tok_embeddings.weight"] = torch.randn(VOCAB, DIM) * 0.1
    tensors["norm.weight"] = torch.ones(DIM)
    head = torch.randn(VOCAB, DIM) / DIM**0.5
    visible = [NUM_SPECIAL + byte for byte in range(32, 127)] + [
        SPECIALS.index("[STREAMING_PAD]"),
        SPECIALS.index("[STREAMING_WORD]"),
    ]
    mask = torch.zeros(VOCAB, 1)
    mask[visible] = 1.0
    tensors["output.weight"] = head * mask  # only printable bytes and the streaming specials can win
    for i in range(LAYERS):
        layer = f"layers.{i}."
        linear(layer + "attention.wq", HEADS * HEAD_DIM, DIM)
        linear(layer + "attention.wk", KV_HEADS * HEAD_DIM, DIM)
        linear(layer + "attention.wv", KV_HEADS * HEAD_DIM, DIM)
        linear(layer + "attention.wo", DIM, HEADS * HEAD_DIM)
        tensors[layer + "attention_norm.weight"] = torch.ones(DIM)
        tensors[layer + "ffn_norm.weight"] = torch.ones(DIM)
        linear(layer + "feed_forward.w1", HIDDEN, DIM)
        linear(layer + "feed_forward.w3", HIDDEN, DIM)
        linear(layer + "feed_forward.w2", DIM, HIDDEN)
        linear(layer + "ada_rms_norm_t_cond.0", T_COND, DIM)
        linear(layer + "ada_rms_norm_t_cond.2", DIM, T_COND)
    tensors[encoder + "conv_layers.0.conv.weight"] = torch.randn(ENC_DIM, MEL_BINS, 3) / (MEL_BINS * 3) ** 0.5
    tensors[encoder + "conv_layers.0.conv.bias"] = torch.zeros(ENC_DIM)
    tensors[encoder + "conv_layers.1.conv.weight"] = torch.randn(ENC_DIM, ENC_DIM, 3) / (ENC_DIM * 3) ** 0.5
    tensors[encoder + "conv_layers.1.conv.bias"] = torch.zeros(ENC_DIM)
    tensors[encoder + "transformer.norm.weight"] = torch.ones(ENC_DIM)
    for i in range(LAYERS):
        layer = f"{encoder}transformer.layers.{i}."
        linear(layer + "attention.wq", HEADS * HEAD_DIM, ENC_DIM, bias=True)
        linear(layer + "attention.wk", HEADS * HEAD_DIM, ENC_DIM)
        linear(layer + "attention.wv", HEADS * HEAD_DIM, ENC_DIM, bias=True)
        linear(layer + "attention.wo", ENC_DIM, HEADS * HEAD_DIM, bias=True)
        tensors[layer + "attention_norm.weight"] = torch.ones(ENC_DIM)
        tensors[layer + "ffn_norm.weight"] = torch.ones(ENC_DIM)
        linear(layer + "feed_forward.w1", ENC_HIDDEN, ENC_DIM)
        linear(layer + "feed_forward.w3", ENC_HIDDEN, ENC_DIM)
        linear(layer + "feed_forward.w2", ENC_DIM, ENC_HIDDEN, bias=True)
    linear(prefix + "audio_language_projection.0", DIM, ENC_DIM * 4)
    tensors[prefix + "audio_language_projection.2.weight"] = torch.randn(DIM, DIM) * 3 / DIM**0.5
    return {name: tensor.contiguous() for name, tensor in tensors.items()}


def build(directory: Path) -> Path:
    """Write the three checkpoint files into ``directory`` (created if needed)."""
    from safetensors.torch import save_file

    directory.mkdir(parents=True, exist_ok=True)
    (directory / "tekken.json").write_text(json.dumps(tekken()))
    (directory / "params.json").write_text(json.dumps(params(), indent=1))
    save_file(weights(), str(directory / "consolidated.safetensors"))  # type: ignore[arg-type]
    return directory


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python scripts/make_tiny_voxtral.py OUTDIR")
    print(f"tiny Voxtral Realtime checkpoint in {build(Path(sys.argv[1]))}")
