"""``voxdesk serve``: any engine behind vLLM's ``/v1/realtime``, the OpenAI Realtime API and
Wyoming. The dialects' wire cores live in :mod:`voxdesk.engine.wire`; here is the I/O around
them: the listener, connections, the HTTP side (health, metrics) and each dialect's server."""
