"""The WebSocket server of ``voxdesk serve``: vLLM's ``/v1/realtime`` and OpenAI's transcription sessions."""
