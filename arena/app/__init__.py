"""The program: the CLI, the command facade it calls, the runner, the dry run, site data and the demo.

This is the only layer that wires kinds (debaters, judges), motions and the rating code to the kernel.
"""
