"""The program: the CLI and the Python API for notebooks (arena.open), the command facade both call, and below the
facade the dry run, runs and their workers, the match engine, people's ballots, the site's data, the ballot web app
and the wiring of a workspace.

This is the only layer that wires kinds (debaters, judges), motions and the rating code to the kernel.
"""
