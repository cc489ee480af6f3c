"""Spoken replies: what Voxdesk says aloud (answers, confirmations, alarms, errors), synthesized
by :mod:`voxdesk.engine.tts` and played on the default output."""
