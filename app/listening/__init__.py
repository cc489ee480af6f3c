"""Listening: the microphone, the controller that joins it to an engine, the live transcript."""
