"""Home Assistant's Wyoming protocol, speech-to-text subset: framing, events, audio
conversion, ``info`` and the server's state machine, with no I/O."""
