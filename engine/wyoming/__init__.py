"""Home Assistant's Wyoming protocol, speech-to-text subset: a server over any engine and a
client engine for Wyoming STT servers (``shared/docs/wyoming-reference.md``).

:mod:`.framing` and :mod:`.protocol` hold the wire format and the server's state machine with
no I/O; :mod:`.server` pumps them over asyncio TCP and :mod:`.client` is the client engine.
"""
