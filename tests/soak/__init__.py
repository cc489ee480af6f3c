"""Soaks: the desktop's listening path and ``voxdesk serve`` run for a long time while their memory,
descriptors, threads, tasks, latency and history rows are sampled; each slope is held to a bound.

``python -m tests.soak --which controller,serve,vllm`` is the long form (``make soak``);
``test_soak_short.py`` runs each for a short time in ``make test``.
"""
