"""vLLM's ``/v1/realtime`` WebSocket protocol: event models, the protocol core, server and client."""
