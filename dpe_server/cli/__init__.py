"""The `dpe-server` command: `command` (its arguments, and serve, read and check), `banner`
(what `serve` tells the person who started it once the folder is indexed), `allocator` (the
C allocator of the serving process, giving big freed blocks back to the system).
"""
