"""The local GPU engine: vLLM's ``AsyncLLM`` fed by streaming input, one long-lived request a
session; vllm and torch are imported only when an engine loads."""
