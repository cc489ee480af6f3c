"""vLLM's ``/v1/realtime`` WebSocket dialect: event models and the server's protocol core."""
