"""Client engines: a :class:`~voxdesk.engine.session.StreamingEngine` over a remote server of
each dialect (vLLM realtime, OpenAI Realtime, Wyoming), each able to fail over to a local engine."""
