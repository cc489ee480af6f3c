"""Speech output: text to audio by a synthesizer on this computer (espeak-ng) or an
OpenAI-compatible ``/v1/audio/speech`` server; the app plays it (:mod:`voxdesk.app.speaking`)."""
