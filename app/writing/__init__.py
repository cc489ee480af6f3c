"""Writing what was said the way it is meant: a mode's steps applied to each final text.

``vocabulary`` (entries and their file format), ``correction`` (near misses of them fixed after
the fact, by ``phonetic`` keys), ``replacements`` (user rules), ``punctuation`` (spoken marks),
``numbers`` (digits, times, percentages), ``tidy`` (small whole-text touches), ``modes`` (which
steps, words and rules), ``pipeline`` (:func:`~voxdesk.app.writing.pipeline.write_text`, the one
way a mode writes a text), ``user_mode`` (the ``[writing]`` settings) and ``reports`` (a
transcription written by a mode). Qt-free.
"""
