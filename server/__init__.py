"""``voxdesk serve``: any engine behind vLLM's ``/v1/realtime``, the OpenAI Realtime API and
Wyoming. The dialects' wire cores live in :mod:`voxdesk.engine.wire`; here is the I/O around
them. Every dialect's server is built on one skeleton: the listener (:mod:`.listener`), the
connection loop (:mod:`.connection`) and the fold of engine events into text (:mod:`.serving`);
each dialect (:mod:`.realtime`, :mod:`.wyoming`) adds its transport and words its wire events.
The HTTP side of ``/v1/realtime`` (health, metrics) is :mod:`.http`."""
