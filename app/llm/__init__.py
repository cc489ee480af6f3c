"""The assistant's language model: one client for any OpenAI-compatible server, and the uses
built on it (dictation cleanup, picking a command)."""
