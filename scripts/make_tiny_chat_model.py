"""Build a tiny chat model that vLLM's OpenAI-compatible server runs on a CPU.

Usage: ``python scripts/make_tiny_chat_model.py OUTDIR [--mode steered|random] [--seed 0]``
(needs torch, transformers and tokenizers, which the vLLM test environment has). Nothing is
downloaded; the folder is replaced, and the same arguments write the same bytes.

The model is a 2-layer ``LlamaForCausalLM`` at toy size (about 450 k parameters, float32, up to
8192 positions) with a byte-level BPE tokenizer trained on a few built-in sentences (596 tokens,
every JSON punctuation character its own token) and a Qwen2.5/Hermes chat template, so vLLM takes
chat, structured outputs and tool calls (``--tool-call-parser hermes``) on it. Its text is
meaningless.

``--mode steered`` (the default) adds a small hand-wired circuit to the random weights so that
greedy output is short, deterministic and finishes under any grammar: plain chat answers
``Hello``, an open string gets ``ok`` and closes, numbers are ``1``, objects and arrays close as
soon as the grammar lets them, and when tools are in the prompt the answer starts with
``<tool_call>``. ``--mode random`` keeps the random weights: greedy output repeats one token and
strings never close, good for plumbing only.
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

import torch
from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, processors, trainers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

HIDDEN, LAYERS, HEADS, KV_HEADS = 128, 2, 4, 2  # head_dim 32: vLLM's CPU attention needs at least 32
MAX_POSITIONS = 8192  # Voxdesk's 13 commands as tools make a prompt of about 2,000 tokens here
VOCAB_LIMIT = 1024  # what the trainer may reach; the corpus gives 596
SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]  # skipped in the output text
TOOL_TOKENS = ["<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>", "<tools>", "</tools>"]

# Qwen2.5's template (Hermes tool calls: <tool_call>\n{"name": ..., "arguments": ...}\n</tool_call>).
CHAT_TEMPLATE = r"""{%- if tools %}
    {{- '<|im_start|>system\n' }}
    {%- if messages[0]['role'] == 'system' %}
        {{- messages[0]['content'] }}
    {%- else %}
        {{- 'You are a helpful assistant.' }}
    {%- endif %}
    {{- "\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
        ~ "You are provided with function signatures within <tools></tools> XML tags:\n<tools>" }}
    {%- for tool in tools %}
        {{- "\n" }}
        {{- tool | tojson }}
    {%- endfor %}
    {{- "\n</tools>\n\nFor each function call, return a json object with function name and arguments within "
        ~ "<tool_call></tool_call> XML tags:\n<tool_call>\n"
        ~ "{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n" }}
{%- else %}
    {%- if messages[0]['role'] == 'system' %}
        {{- '<|im_start|>system\n' + messages[0]['content'] + '<|im_end|>\n' }}
    {%- else %}
        {{- '<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n' }}
    {%- endif %}
{%- endif %}
{%- for message in messages %}
    {%- if (message.role == "user") or (message.role == "system" and not loop.first)
           or (message.role == "assistant" and not message.tool_calls) %}
        {{- '<|im_start|>' + message.role + '\n' + (message.content or '') + '<|im_end|>' + '\n' }}
    {%- elif message.role == "assistant" %}
        {{- '<|im_start|>' + message.role }}
        {%- if message.content %}
            {{- '\n' + message.content }}
        {%- endif %}
        {%- for tool_call in message.tool_calls %}
            {%- if tool_call.function is defined %}
                {%- set tool_call = tool_call.function %}
            {%- endif %}
            {{- '\n<tool_call>\n{"name": "' }}
            {{- tool_call.name }}
            {{- '", "arguments": ' }}
            {%- if tool_call.arguments is string %}
                {{- tool_call.arguments }}
            {%- else %}
                {{- tool_call.arguments | tojson }}
            {%- endif %}
            {{- '}\n</tool_call>' }}
        {%- endfor %}
        {{- '<|im_end|>\n' }}
    {%- elif message.role == "tool" %}
        {%- if (loop.index0 == 0) or (messages[loop.index0 - 1].role != "tool") %}
            {{- '<|im_start|>user' }}
        {%- endif %}
        {{- '\n<tool_response>\n' }}
        {{- message.content }}
        {{- '\n</tool_response>' }}
        {%- if loop.last or (messages[loop.index0 + 1].role != "tool") %}
            {{- '<|im_end|>\n' }}
        {%- endif %}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\n' }}
{%- endif %}"""

CORPUS = [
    "Open the browser. Search the web for the weather in Paris tomorrow.",
    "Set the volume to 40 percent. Mute the microphone. Take a screenshot now.",
    "You are a helpful assistant. You turn a user's spoken request into exactly one tool call.",
    "The quick brown fox jumps over the lazy dog, again and again, 1234567890 times.",
    'Return a json object: {"text": "hello world", "name": "open_app", "arguments": {"app": "firefox"}}',
    '{"type": "object", "properties": {"text": {"type": "string"}, "count": {"type": "number"}}, "required": ["text"]}',
    '[{"name": "set_volume", "parameters": {"level": 40}}, {"name": "search", "parameters": {"query": "cats"}}]',
    "yes no maybe true false null positive negative neutral red green blue",
    "Hello! How can I help you today? I can open apps, press keys such as ctrl+shift+t, and search.",
    "system user assistant tool function description parameters enum string integer boolean",
    'Hello! {"ok": "ok", "text": "ok", "answer": "ok"} ok ok ok "ok" [true,false,null]',
    "Hello\nHello there.\nHello world.",
]

# The steered circuit's channels of the residual stream: a constant 1, one-hot "the token is ..."
# identities, the "tools are in the prompt" flag and the "start of an answer with tools" unit.
# Random filler weights never write into the first DESIGNED channels.
CONST, IS_NEWLINE, IS_QUOTE, IS_OK, IS_SPACE, IS_BRACE, IS_TOOLS, TOOLS_FLAG, TOOLS_START = range(9)
DESIGNED = 12
IDENTITIES = {IS_NEWLINE: "Ċ", IS_QUOTE: '"', IS_OK: "ok", IS_SPACE: "Ġ", IS_BRACE: "{", IS_TOOLS: "<tools>"}
RANKS = {
    "<|im_end|>": 10, '"': 9, "}": 8, "]": 7, ",": 6, "1": 5, "{": 4, "[": 3, "true": 2.9, "false": 2.8,
    "null": 2.7, "<tool_call>": 2.6, "</tool_call>": 2.5, "<|endoftext|>": -10, "<|im_start|>": -10,
    "<tools>": -10, "</tools>": -10, "<tool_response>": -10, "</tool_response>": -10, "Ġ": -3,
}  # fmt: skip
"""The constant logits that decide where no override applies; other tokens get a fixed random
order in [0, 2), space-prefixed words -4 (so after a forced ``": "`` the lone space wins and a
free value opens ``{``), whitespace -5."""
OVERRIDES = [  # (after this identity, this token, gains): "bigram" boosts
    (IS_NEWLINE, "Hello", 20.0),  # the end of the generation prompt: Hello
    (IS_QUOTE, "ok", 15.0),  # an open string: ok
    (IS_OK, '"', 15.0),  # then close it
    (IS_SPACE, "{", 10.0),  # a free JSON value after ": " (tool arguments): an object
    (IS_BRACE, "}", 5.0),  # closed at once when nothing is required
    (TOOLS_START, "<tool_call>", 40.0),  # tools in the prompt and the answer starting
]


def train_tokenizer() -> Tokenizer:
    """Byte-level BPE with all 256 bytes (any text encodes) and punctuation split off (no ``{"``
    or ``":`` merges, which keeps grammar-constrained decoding simple), plus the chat and tool tokens."""
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Punctuation("isolated"), pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)]
    )
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB_LIMIT - len(SPECIAL) - len(TOOL_TOKENS),
        min_frequency=1,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        special_tokens=[],
        show_progress=False,
    )
    tokenizer.train_from_iterator(CORPUS * 20, trainer=trainer)
    tokenizer.add_special_tokens([AddedToken(token, special=True, normalized=False) for token in SPECIAL])
    tokenizer.add_tokens([AddedToken(token, special=False, normalized=False) for token in TOOL_TOKENS])
    return tokenizer


def steer(model: LlamaForCausalLM, tokenizer: Tokenizer, seed: int) -> None:
    """Overwrite every weight: std-0.02 random filler outside the designed channels, plus the circuit.

    Logits are ``lm_head . norm(x)``: the constant channel gives a global ranking (:data:`RANKS`),
    the identity channels of the last token give :data:`OVERRIDES`. Layer 0's head 0 has a
    constant query and "is ``<tools>``" as key and value, in head dim 15 (the slowest RoPE pair,
    so the score hardly depends on position): it writes :data:`TOOLS_FLAG`. Layer 0's MLP unit 0
    is AND(flag, last token is a newline) into :data:`TOOLS_START`."""
    generator = torch.Generator().manual_seed(seed)
    config = model.config
    width, vocab, head_dim = config.hidden_size, config.vocab_size, config.head_dim
    wanted = {*IDENTITIES.values(), *RANKS, *(token for _, token, _ in OVERRIDES)}
    ids = {token: tokenizer.token_to_id(token) for token in wanted}
    missing = sorted(token for token, index in ids.items() if index is None)
    if missing:
        raise SystemExit(f"tokens missing from the vocabulary: {missing}")

    def noise(*shape: int, std: float = 0.02) -> torch.Tensor:
        return torch.randn(*shape, generator=generator) * std

    with torch.no_grad():
        state = model.state_dict()
        embeddings = torch.zeros(vocab, width)
        embeddings[:, DESIGNED:] = noise(vocab, width - DESIGNED, std=0.05)
        embeddings[:, CONST] = 1.0
        for channel, token in IDENTITIES.items():
            embeddings[ids[token], channel] = 1.0
        state["model.embed_tokens.weight"].copy_(embeddings)

        for i in range(config.num_hidden_layers):
            layer = f"model.layers.{i}."
            for name in ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj"):
                state[f"{layer}{name}.weight"].copy_(noise(*state[f"{layer}{name}.weight"].shape))
            for name in ("mlp.gate_proj", "mlp.up_proj", "mlp.down_proj"):
                state[f"{layer}{name}.weight"].copy_(noise(*state[f"{layer}{name}.weight"].shape))
            state[layer + "input_layernorm.weight"].fill_(1.0)
            state[layer + "post_attention_layernorm.weight"].fill_(1.0)
            state[layer + "self_attn.o_proj.weight"][:DESIGNED, :] = 0
            state[layer + "mlp.down_proj.weight"][:DESIGNED, :] = 0

        layer = "model.layers.0."
        query, key = state[layer + "self_attn.q_proj.weight"], state[layer + "self_attn.k_proj.weight"]
        value, out = state[layer + "self_attn.v_proj.weight"], state[layer + "self_attn.o_proj.weight"]
        slow = head_dim // 2 - 1  # the neox RoPE pair (15, 31) for head_dim 32
        query[slow, :], key[slow, :], value[0, :], out[:, 0] = 0, 0, 0, 0
        query[slow, CONST] = 1.6
        key[slow, IS_TOOLS] = 1.6
        value[0, IS_TOOLS] = 1.0
        out[TOOLS_FLAG, 0] = 0.134  # normalised inputs are about 7.5x the raw channels: the flag is about 1
        gate, up, down = (state[f"{layer}mlp.{name}.weight"] for name in ("gate_proj", "up_proj", "down_proj"))
        gate[0, :], up[0, :], down[:, 0] = 0, 0, 0
        gate[0, TOOLS_FLAG], gate[0, IS_NEWLINE], gate[0, CONST] = 4.0, 4.0, -6.0
        up[0, CONST] = 1.0
        down[TOOLS_START, 0] = 0.0128

        state["model.norm.weight"].fill_(1.0)
        head = torch.zeros(vocab, width)
        base = torch.rand(vocab, generator=generator) * 2.0
        for token, index in tokenizer.get_vocab().items():
            if token and set(token) <= set("ĠĊĉč"):
                base[index] = -5.0
            elif token.startswith("Ġ"):
                base[index] = -4.0
        for token, rank in RANKS.items():
            base[ids[token]] = rank
        head[:, CONST] = base
        for channel, token, gain in OVERRIDES:
            head[ids[token], channel] = gain
        state["lm_head.weight"].copy_(head)
    model.load_state_dict(state)


def build(directory: Path, mode: str = "steered", seed: int = 0) -> Path:
    """Write the model folder (``config.json``, ``generation_config.json``, ``model.safetensors``,
    the tokenizer files and ``chat_template.jinja``), replacing ``directory`` if it exists."""
    torch.manual_seed(seed)  # the random mode's weights
    if directory.exists():
        shutil.rmtree(directory)
    directory.mkdir(parents=True)
    tokenizer = train_tokenizer()
    PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        bos_token=None,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        unk_token=None,
        model_max_length=MAX_POSITIONS,
        chat_template=CHAT_TEMPLATE,
        clean_up_tokenization_spaces=False,
    ).save_pretrained(directory)
    eos, pad = tokenizer.token_to_id("<|im_end|>"), tokenizer.token_to_id("<|endoftext|>")
    config = LlamaConfig(
        vocab_size=tokenizer.get_vocab_size(with_added_tokens=True),
        hidden_size=HIDDEN,
        intermediate_size=2 * HIDDEN,
        num_hidden_layers=LAYERS,
        num_attention_heads=HEADS,
        num_key_value_heads=KV_HEADS,
        head_dim=HIDDEN // HEADS,
        max_position_embeddings=MAX_POSITIONS,
        rms_norm_eps=1e-5,
        rope_theta=1e6,
        tie_word_embeddings=False,
        bos_token_id=None,
        eos_token_id=eos,
        pad_token_id=pad,
        dtype="float32",
    )
    model = LlamaForCausalLM(config)
    if mode == "steered":
        steer(model, tokenizer, seed)
    model.save_pretrained(directory)
    generation = {"eos_token_id": [eos, pad], "pad_token_id": pad, "do_sample": False}
    (directory / "generation_config.json").write_text(json.dumps(generation, indent=2))
    return directory


def main() -> None:
    parser = argparse.ArgumentParser(description="Build the tiny chat model for the vLLM tests.")
    parser.add_argument("out", type=Path, help="the model folder to write (replaced if it exists)")
    parser.add_argument("--mode", choices=["steered", "random"], default="steered")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(f"tiny {args.mode} chat model in {build(args.out, args.mode, args.seed)}")


if __name__ == "__main__":
    main()
