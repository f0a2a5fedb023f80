"""Algorithms: pure functions on arrays with an explicit ``numpy.random.Generator``; no I/O."""
