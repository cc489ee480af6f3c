"""The sans-I/O cores of the three wire dialects: bytes and events in, events and bytes out.

No module here opens a socket, runs an event loop or loads a model (tests/test_architecture.py):
:mod:`.realtime` is vLLM's ``/v1/realtime``, :mod:`.openai` the OpenAI Realtime API's
transcription sessions, :mod:`.wyoming` Home Assistant's Wyoming protocol.
"""
